// The web console's routes on the server's own Fastify app (same origin as the API), under /console:
// sign-in and sign-out, the pages, the confirmations and their actions, a download, the JSON the
// progress script polls, and the two assets. Every page calls the API's services (src/server/services)
// as the signed-in user, so it shows what the API would show that user and a foreign id is a 404.
import { create as contentDisposition } from 'content-disposition';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { jobState } from '../../model/job-state';
import type { Authenticator, Caller } from '../auth/authenticate';
import type { Ctx } from '../context';
import { appliances } from '../services/appliances';
import { images } from '../services/images';
import { osProfiles } from '../services/os-profile';
import { publications } from '../services/publications';
import { software } from '../services/software';
import { isServiceError } from '../service-error';
import { ASSETS } from './assets';
import type { Html } from './html';
import { BASE, stateWords } from './layout';
import { applianceListPage, appliancePage, idOf } from './pages/appliances';
import { confirmPage, errorPage, signInPage } from './pages/common';
import { imageListPage, imagePage } from './pages/images';
import { softwareListPage, softwarePage } from './pages/software';
import { sbomTable } from './sbom';
import { ConsoleSessions, cookieOf, PRE_SESSION_COOKIE, SESSION_COOKIE, SESSION_SECONDS, setCookie, type Session } from './session';

/** On every console response: no script or style but the console's own files, no framing, no referrer. */
export const CONSOLE_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Content-Security-Policy', "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"],
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'no-referrer'],
  ['X-Frame-Options', 'DENY'],
];

/** The largest form the console accepts (sign-in, a confirmation). */
const FORM_BYTES = 16 * 1024;

export interface ConsoleDeps {
  ctx: Ctx;
  auth: Authenticator;
}

type Params = Record<string, string>;
type Query = Record<string, string | undefined>;
type Form = Record<string, string | undefined>;

function sendPage(reply: FastifyReply, status: number, body: Html): FastifyReply {
  return reply.code(status).header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(body.text);
}

function seeOther(reply: FastifyReply, to: string): FastifyReply {
  return reply.code(303).header('Cache-Control', 'no-store').header('Location', to).send();
}

export function registerConsole(app: FastifyInstance, deps: ConsoleDeps): void {
  const { ctx, auth } = deps;
  const sessions = new ConsoleSessions(ctx.store, ctx.box, () => ctx.clock.now());
  const secure = (req: FastifyRequest): boolean => req.protocol === 'https' || (ctx.publicUrl?.startsWith('https:') ?? false);
  const sessionOf = (req: FastifyRequest): Promise<Session | undefined> => sessions.verify(cookieOf(req.headers.cookie, SESSION_COOKIE));

  /** A page for a signed-in user; without a session, GET goes to the sign-in form and anything else is refused. */
  const signedIn =
    (fn: (s: Session, req: FastifyRequest<{ Params: Params; Querystring: Query }>, reply: FastifyReply) => Promise<FastifyReply>) =>
    async (req: FastifyRequest<{ Params: Params; Querystring: Query }>, reply: FastifyReply): Promise<FastifyReply> => {
      const s = await sessionOf(req);
      if (!s) return req.method === 'GET' ? seeOther(reply, `${BASE}/sign-in`) : sendPage(reply, 403, errorPage(403, 'you are not signed in (or your session has ended): sign in again'));
      try {
        return await fn(s, req, reply);
      } catch (e) {
        // A service's refusal or failure (a 409, a 502 from Glance) says why in words, as the API's does.
        if (isServiceError(e)) return sendPage(reply, e.statusCode, errorPage(e.statusCode, e.message, s));
        ctx.log.error({ err: e }, 'console page failed');
        return sendPage(reply, 500, errorPage(500, 'the page could not be made: the server log has the details', s));
      }
    };

  /** A confirmed action: the form's CSRF token must be the session's (403 otherwise). */
  const action = (fn: (s: Session, p: Params) => Promise<string>) =>
    signedIn(async (s, req, reply) => {
      if (!sessions.csrfOk(s, (req.body as Form | undefined)?.csrf)) return sendPage(reply, 403, errorPage(403, 'the form carried no valid CSRF token: open the page again and resend it', s));
      if (s.readOnly) return sendPage(reply, 403, errorPage(403, 'signed in with a read-only API key pair: looking only, no changes', s));
      return seeOther(reply, await fn(s, req.params));
    });

  app.register(
    async (c) => {
      c.addHook('onRequest', (_req, reply, done) => {
        for (const [name, value] of CONSOLE_HEADERS) reply.header(name, value);
        done();
      });
      c.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BYTES }, (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
      c.setNotFoundHandler(async (req, reply) => sendPage(reply, 404, errorPage(404, `no console page at ${req.url.split('?')[0]}`, await sessionOf(req))));
      c.setErrorHandler((err, _req, reply) => {
        const status = isServiceError(err) ? err.statusCode : typeof (err as { statusCode?: unknown }).statusCode === 'number' ? (err as { statusCode: number }).statusCode : 500;
        if (status >= 500) ctx.log.error({ err }, 'console request failed');
        return sendPage(reply, status, errorPage(status, status >= 500 ? 'the request failed: the server log has the details' : (err as Error).message));
      });

      for (const a of ASSETS) {
        c.get(`/assets/${a.name}`, async (_req, reply) => reply.header('Cache-Control', 'public, max-age=31536000, immutable').type(a.type).send(a.body));
      }

      c.get('/', async (req, reply) => seeOther(reply, (await sessionOf(req)) ? `${BASE}/images` : `${BASE}/sign-in`));

      c.get('/sign-in', async (req, reply) => {
        if (await sessionOf(req)) return seeOther(reply, `${BASE}/images`);
        const pre = sessions.preSession();
        reply.header('Set-Cookie', setCookie(PRE_SESSION_COOKIE, pre.cookie, { secure: secure(req), maxAge: 3600 }));
        return sendPage(reply, 200, signInPage(pre.token));
      });

      c.post('/sign-in', async (req, reply) => {
        const form = (req.body ?? {}) as Form;
        const login = form.login ?? '';
        if (!sessions.preSessionOk(cookieOf(req.headers.cookie, PRE_SESSION_COOKIE), form.csrf)) {
          return sendPage(reply, 403, errorPage(403, 'the sign-in form carried no valid CSRF token: open the sign-in page again'));
        }
        const publicKey = form.publicKey?.trim();
        let caller: Caller;
        try {
          caller = publicKey ? await auth.signInWithKey(publicKey, form.secretKey?.trim() ?? '', req.ip) : await auth.signIn(login, form.password ?? '', req.ip);
        } catch (e) {
          if (!isServiceError(e) || e.statusCode >= 500) throw e;
          for (const [k, v] of Object.entries(e.headers)) if (k !== 'WWW-Authenticate') reply.header(k, v);
          const again = sessions.preSession();
          reply.header('Set-Cookie', setCookie(PRE_SESSION_COOKIE, again.cookie, { secure: secure(req), maxAge: 3600 }));
          const message = e.statusCode === 429 ? 'Too many failed sign-ins from this address: wait a minute and try again.' : publicKey ? 'Wrong API key pair.' : 'Wrong login or password.';
          return sendPage(reply, e.statusCode, signInPage(again.token, message, login));
        }
        reply.header('Set-Cookie', [
          setCookie(SESSION_COOKIE, await sessions.open(caller.login, publicKey ? { publicKey, readOnly: caller.readOnly === true } : undefined), { secure: secure(req), maxAge: SESSION_SECONDS }),
          setCookie(PRE_SESSION_COOKIE, '', { secure: secure(req), maxAge: 0 }),
        ]);
        return seeOther(reply, `${BASE}/images`);
      });

      c.post(
        '/sign-out',
        signedIn(async (s, req, reply) => {
          if (!sessions.csrfOk(s, (req.body as Form | undefined)?.csrf)) return sendPage(reply, 403, errorPage(403, 'the form carried no valid CSRF token: open the page again and resend it', s));
          await sessions.endAll(s.login);
          reply.header('Set-Cookie', setCookie(SESSION_COOKIE, '', { secure: secure(req), maxAge: 0 }));
          return seeOther(reply, `${BASE}/sign-in`);
        }),
      );

      c.get(
        '/images',
        signedIn(async (s, req, reply) => sendPage(reply, 200, imageListPage(s, await images.ofUser(ctx, s.login), Number(req.query.page) || 1, ctx.clock.now().getTime()))),
      );

      c.get(
        '/jobs.json',
        signedIn(async (s, req, reply) => {
          // `?ids=1,2,3`: only those images (the rows a page shows running); all of the user's without it.
          const only = req.query.ids === undefined ? undefined : new Set(req.query.ids.split(',').slice(0, 200));
          const out: Record<string, { percentage: number; running: boolean; words: string }> = {};
          for (const st of await images.statusesOfUser(ctx, s.login)) {
            const id = String(st.dbId);
            if (!only || only.has(id)) out[id] = { percentage: st.percentage ?? 0, running: jobState(st) === 'running', words: stateWords(st) };
          }
          return reply.header('Cache-Control', 'no-store').type('application/json').send(JSON.stringify(out));
        }),
      );

      c.get('/appliances', signedIn(async (s, _req, reply) => sendPage(reply, 200, applianceListPage(s, await appliances.list(ctx, s.login)))));

      c.get(
        '/appliances/:aid',
        signedIn(async (s, req, reply) => {
          const { aid } = req.params as { aid: string };
          const appliance = await appliances.get(ctx, s.login, aid);
          const osid = idOf(appliance.osProfileUri);
          const [profile, packages, list] = await Promise.all([
            osid ? osProfiles.get(ctx, s.login, aid, osid) : undefined,
            osid ? osProfiles.packages(ctx, s.login, aid, osid) : [],
            images.list(ctx, s.login, aid),
          ]);
          return sendPage(reply, 200, appliancePage(s, { appliance, profile, packages, images: list }));
        }),
      );

      c.get(
        '/appliances/:aid/delete',
        signedIn(async (s, req, reply) => {
          const { aid } = req.params as { aid: string };
          const a = await appliances.get(ctx, s.login, aid);
          const back = `${BASE}/appliances/${aid}`;
          const question = `Delete the appliance ${a.name ?? ''} ${a.version ?? ''} with its ${a.imageUris?.length ?? 0} images and their publications? This cannot be undone.`;
          return sendPage(reply, 200, confirmPage(s, { title: 'Delete the appliance?', question, action: `${back}/delete`, button: 'Delete the appliance', back }));
        }),
      );
      c.post(
        '/appliances/:aid/delete',
        action(async (s, p) => {
          await appliances.remove(ctx, s.login, p.aid!);
          return `${BASE}/appliances`;
        }),
      );

      const image = '/appliances/:aid/images/:itid';
      c.get(
        image,
        signedIn(async (s, req, reply) => {
          const { aid, itid } = req.params as { aid: string; itid: string };
          const img = await images.get(ctx, s.login, aid, itid);
          const pubs = (await publications.list(ctx, s.login, aid)).filter((p) => p.imageUri?.endsWith(`/images/${itid}`));
          let sbom: Awaited<ReturnType<typeof sbomTable>> | string | undefined;
          if (img.status?.complete) {
            try {
              sbom = await sbomTable(await images.sbom(ctx, s.login, aid, itid, 'spdx'));
            } catch (e) {
              sbom = isServiceError(e) ? 'this image was made before SBOMs were kept' : `the SBOM could not be read (${(e as Error).message})`;
            }
          }
          return sendPage(reply, 200, imagePage(s, { image: img, publications: pubs, sbom, q: String(req.query.q ?? '').slice(0, 200), now: ctx.clock.now().getTime() }));
        }),
      );

      c.get(
        `${image}/download`,
        signedIn(async (s, req, reply) => {
          const { aid, itid } = req.params as { aid: string; itid: string };
          const f = await images.download(ctx, s.login, aid, itid);
          return reply
            .header('Cache-Control', 'no-store')
            .header('Content-Type', f.contentType)
            .header('Content-Length', String(f.size))
            .header('Content-Disposition', contentDisposition(f.fileName))
            .header('ETag', f.etag)
            .send(await f.open());
        }),
      );

      for (const [verb, title, button] of [
        ['cancel', 'Cancel the build?', 'Cancel the build'],
        ['delete', 'Delete the image?', 'Delete the image'],
      ] as const) {
        c.get(
          `${image}/${verb}`,
          signedIn(async (s, req, reply) => {
            const { aid, itid } = req.params as { aid: string; itid: string };
            const img = await images.get(ctx, s.login, aid, itid);
            const back = `${BASE}/appliances/${aid}/images/${itid}`;
            const what = `image ${itid} of ${img.name ?? ''} ${img.version ?? ''} (${img.targetFormat?.name ?? ''}), now ${stateWords(img.status ?? {})}`;
            const question = verb === 'cancel' ? `Cancel the build of ${what}?` : `Delete ${what}, its file, its SBOMs and its publications? This cannot be undone.`;
            return sendPage(reply, 200, confirmPage(s, { title, question, action: `${back}/${verb}`, button, back }));
          }),
        );
      }
      c.post(
        `${image}/cancel`,
        action(async (s, p) => {
          await images.cancel(ctx, s.login, p.aid!, p.itid!);
          return `${BASE}/appliances/${p.aid!}/images/${p.itid!}`;
        }),
      );
      c.post(
        `${image}/delete`,
        action(async (s, p) => {
          await images.remove(ctx, s.login, p.aid!, p.itid!);
          return `${BASE}/images`;
        }),
      );

      c.get('/software', signedIn(async (s, _req, reply) => sendPage(reply, 200, softwareListPage(s, await software.list(ctx, s.login)))));
      c.get(
        '/software/:msid',
        signedIn(async (s, req, reply) => {
          const { msid } = req.params as { msid: string };
          const [sw, files] = await Promise.all([software.get(ctx, s.login, msid), software.artifacts(ctx, s.login, msid, undefined)]);
          return sendPage(reply, 200, softwarePage(s, sw, files));
        }),
      );
    },
    { prefix: BASE },
  );
}
