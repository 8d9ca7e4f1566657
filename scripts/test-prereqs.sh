#!/usr/bin/env bash
# Run by `npm test` (pretest): the Debian tools the tests use. On a machine that lacks one, install it
# when we may (root with apt-get, as on CI and these machines), else say what is missing; the
# OpenStack tests start their own Keystone + Glance through ../shared/openstack/start-openstack.sh.
set -u
declare -A PKG=([mmdebstrap]=mmdebstrap [xmllint]=libxml2-utils [qemu-img]=qemu-utils [mke2fs]=e2fsprogs [debugfs]=e2fsprogs [filefrag]=e2fsprogs [partx]=util-linux [blkid]=util-linux)
declare -A missing=()
for tool in "${!PKG[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$tool" >/dev/null 2>&1 || missing[${PKG[$tool]}]=1
done
[ ${#missing[@]} -eq 0 ] && exit 0
pkgs="${!missing[*]}"
if [ "$EUID" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test prerequisites: installing $pkgs"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs >/dev/null && exit 0
fi
echo "test prerequisites missing: $pkgs (Debian packages); the tests that need them will fail" >&2
exit 0
