// Stage 1 of a real image build: the Debian root tree (see ../system.ts for the contract).
export { defaultMirror, validateMirror, DEFAULT_MIRROR } from './mirror';
