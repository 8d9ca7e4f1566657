// `appliance-forge completion bash|zsh`, through the real CLI, and the scripts it prints run by the real
// shells: bash calls the completion function as readline would (COMP_WORDS, COMP_CWORD); zsh completes
// typed lines in an interactive shell on a pseudo-terminal (zsh/zpty), with compinit's real machinery.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliBundle, runCli } from './helpers/cli';

const zsh = spawnSync('zsh', ['--version']).status === 0;
if (!zsh) console.warn('SKIP zsh completion: zsh is not installed (bash scripts/prereqs.sh test installs it)');

/** The commands `--help` lists: the table the scripts must follow, whatever commands it gains. */
async function listedCommands(): Promise<string[]> {
  const help = (await runCli(['--help'])).stdout;
  return help.split('commands:\n')[1]!.split('\n\n')[0]!.split('\n').map((l) => l.trim().split(/\s+/)[0]!);
}

async function script(shell: string): Promise<string> {
  const r = await runCli(['completion', shell]);
  expect(r.code, r.stderr).toBe(0);
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'af-completion-')), shell);
  writeFileSync(file, r.stdout);
  return file;
}

describe('appliance-forge completion', () => {
  beforeAll(() => {
    cliBundle();
  });

  it('bash: every command of the table, each command\'s options, the words a first argument takes', async () => {
    const file = await script('bash');
    /** The candidates for the line typed so far (a trailing space starts a new word). */
    const complete = (line: string): string[] =>
      execFileSync('bash', ['-c', [
        'source "$1"',
        'read -ra W <<< "appliance-forge $2"',
        '[[ -z $2 || $2 == *" " ]] && W+=("")',
        'COMP_WORDS=("${W[@]}"); COMP_CWORD=$(( ${#W[@]} - 1 ))',
        '_appliance_forge',
        'printf "%s\\n" "${COMPREPLY[@]}"',
      ].join('\n'), '_', file, line], { encoding: 'utf8' }).split('\n').filter(Boolean);
    expect(execFileSync('bash', ['-c', 'source "$1"; complete -p appliance-forge', '_', file], { encoding: 'utf8' })).toContain('-F _appliance_forge appliance-forge');
    const commands = await listedCommands();
    expect(commands).toContain('completion');
    expect(complete('')).toEqual([...commands, 'help', '--help', '--version']);
    expect(complete('pl')).toEqual(['plan']);
    expect(complete('plan --v')).toEqual(['--var', '--var-file']);
    expect(complete('apply x.yml --on')).toEqual(['--only']);
    expect(complete('validate --')).toEqual(expect.arrayContaining(['--strict', '--var', '--var-file', '--json', '--help']));
    expect(complete('serve --max-b')).toEqual(['--max-build-minutes', '--max-builds']);
    expect(complete('users ')).toEqual(['add']);
    expect(complete('users --data-dir d ')).toEqual(['add']);
    expect(complete('users add ')).toEqual([]);
    expect(complete('completion ')).toEqual(['bash', 'zsh']);
    expect(complete('help vali')).toEqual(['validate']);
    // An option's value is left to the shell's file names (complete -o default).
    expect(complete('plan --var-file ')).toEqual([]);
  });

  it.skipIf(!zsh)('zsh: commands with their summaries, options and words, through compinit in an interactive zsh', async () => {
    const file = await script('zsh');
    const home = mkdtempSync(path.join(tmpdir(), 'af-zsh-'));
    // The widget bound to ^X prints the line as completion left it, between markers.
    writeFileSync(path.join(home, '.zshrc'), [
      "PS1='> '",
      'autoload -U compinit && compinit -u -D',
      `source ${JSON.stringify(file)}`,
      'show() { print -r -- "<<$BUFFER>>"; BUFFER=; zle accept-line; }',
      'zle -N show',
      "bindkey '^X' show",
    ].join('\n'));
    const lines = ['appliance-forge pl', 'appliance-forge plan --var-f', 'appliance-forge apply -a u --exc', 'appliance-forge completion z', 'appliance-forge users a', 'appliance-forge help vali', 'appliance-forge bo'];
    const r = spawnSync('zsh', ['-f', '-c', [
      'zmodload zsh/zpty',
      `zpty z 'ZDOTDIR=${home} zsh -i'`,
      'for line in "$@"; do',
      "  zpty -w -n z \"$line\"$'\\t\\x18'",
      "  zpty -r z out '*<<*>>*'",
      '  print -r -- "${${out##*<<}%%>>*}"',
      'done',
      'zpty -d z',
    ].join('\n'), '_', ...lines], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).map((l) => l.trimEnd())).toEqual([
      'appliance-forge plan', 'appliance-forge plan --var-file', 'appliance-forge apply -a u --except', 'appliance-forge completion zsh',
      'appliance-forge users add', 'appliance-forge help validate', 'appliance-forge boot',
    ]);
    const text = (await runCli(['completion', 'zsh'])).stdout;
    for (const c of await listedCommands()) expect(text).toMatch(new RegExp(`'${c}:[^']+'`));
  });

  it('a missing or unknown shell is a usage error', async () => {
    for (const args of [['completion'], ['completion', 'fish']]) {
      const r = await runCli(args);
      expect([r.code, r.stderr]).toEqual([2, expect.stringContaining('completion takes one shell: bash or zsh')]);
    }
  });
});
