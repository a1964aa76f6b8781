#!/usr/bin/env bash
# Publishes every package from its packed tarball: `npm run release -- [npm publish options]`
# (e.g. `--dry-run`, `--tag next`), after `npm run build` and `npm run pack-check`.
# Why tarballs: `npm pack` strips the workspace-only `@xaalis/source` export condition and the scripts from
# the packed manifest (scripts/pack-manifest.mjs, each package's prepack/postpack), but `npm publish` run in
# a package's folder sends the registry the manifest it reads after postpack has restored the original,
# condition included. `npm publish <tarball>` reads the manifest inside the tarball. Publishing from a
# package's folder is refused (its prepublishOnly).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
packages=(core engine webhooks testkit store-sqlite store-postgres http server)
# the registry named among the options, if any, for the "already published" check
registry=()
args=("$@")
for i in "${!args[@]}"; do
  case "${args[$i]}" in
    --registry=*) registry=("${args[$i]}") ;;
    --registry) registry=(--registry "${args[$((i + 1))]:-}") ;;
  esac
done
for p in "${packages[@]}"; do
  [ -f "$root/packages/$p/dist/index.js" ] || { echo "packages/$p/dist is missing: run npm run build first"; exit 1; }
  (cd "$root/packages/$p" && npm pack --silent --pack-destination "$work" > /dev/null)
done
for tarball in "$work"/*.tgz; do
  # the manifest the registry will record: no workspace condition, no scripts
  if tar -xOzf "$tarball" package/package.json | grep -q -e '"@xaalis/source"' -e '"prepublishOnly"'; then
    echo "$(basename "$tarball"): the packed manifest still names the workspace condition or its scripts; not published"
    exit 1
  fi
done
for p in "${packages[@]}"; do
  # in dependency order, so that a package's own @xaalis dependencies are on the registry first
  tarball="$(ls "$work"/xaalis-"$p"-*.tgz)"
  spec="$(tar -xOzf "$tarball" package/package.json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const m=JSON.parse(s);console.log(`${m.name}@${m.version}`)})')"
  # a release that stopped part-way resumes: a version the registry already has is skipped (asked of the
  # registry the publish goes to: a --registry option is passed on; an unreachable registry counts as not
  # having it, and the publish then fails and stops the script)
  version="${spec##*@}"
  if [ "$(npm view "$spec" version "${registry[@]}" 2> /dev/null)" = "$version" ]; then
    echo "$spec is already published: skipped"
    continue
  fi
  echo "publishing $spec"
  # scoped packages are private by default on the registry: public, as each manifest's publishConfig says
  npm publish "$tarball" --access public "$@"
done
