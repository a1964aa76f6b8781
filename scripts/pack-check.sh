#!/usr/bin/env bash
# What a user of the published packages gets: `npm pack` of every package (after `npm run build`),
# installed from the tarballs into an empty project outside the workspace, then
#  - the declarations typecheck for an ESM and a CommonJS consumer (module nodenext) and for an ESM
#    one under "moduleResolution": "bundler", with skipLibCheck off
#    (no optional peer such as fastify installed),
#  - an ESM program runs a conversion over the HTTP API on the embedded store and verifies a webhook,
#  - every package loads with require(),
#  - the `xaalis-server` bin starts, answers and stops on SIGTERM; its create-business command runs,
#  - the packed manifests: every file `exports` names is there, the `@xaalis/source` condition is
#    gone (packs strip it: scripts/pack-manifest.mjs; the workspace's manifests keep it), and dist/
#    imports only declared dependencies; the ESM program also runs with --conditions=@xaalis/source,
#  - npm publish in a package's folder is refused, and scripts/publish.sh (the tarballs) runs --dry-run.
# Needs the npm registry for the packages' own dependencies. Usage: npm run build && npm run pack-check
# (through npm, so that it runs on the Node 24 of the node@24 devDependency, like every script)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)' ||
  { echo "pack-check needs Node >= 22.19 (node:sqlite); run it as npm run pack-check"; exit 1; }
work="$(mktemp -d)"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

for p in core engine webhooks testkit store-sqlite store-postgres http server; do
  [ -f "$root/packages/$p/dist/index.js" ] || { echo "packages/$p/dist is missing: run npm run build first"; exit 1; }
  (cd "$root/packages/$p" && npm pack --silent --pack-destination "$work" > /dev/null)
  # the pack's prepack strips the condition from the packed manifest; its postpack puts it back here
  grep -q '"@xaalis/source"' "$root/packages/$p/package.json" && [ ! -e "$root/packages/$p/package.json.workspace" ] ||
    { echo "packages/$p/package.json was not restored after npm pack"; exit 1; }
done
mkdir "$work/app"
cp "$root"/scripts/pack-check/* "$work/app/"
cd "$work/app"
echo '{ "name": "pack-check", "version": "1.0.0", "private": true, "type": "module" }' > package.json
typescript="$(node -p 'require(process.argv[1]).devDependencies.typescript' "$root/package.json")"
types_node="$(node -p 'require(process.argv[1]).devDependencies["@types/node"]' "$root/package.json")"
npm install --silent --no-audit --no-fund "$work"/*.tgz "typescript@$typescript" "@types/node@$types_node" > /dev/null

echo "pack-check: typecheck (ESM and CommonJS consumers, then a bundler's resolution; skipLibCheck off)"
npx tsc -p tsconfig.json
npx tsc -p tsconfig.bundler.json
node manifests.mjs
node smoke.mjs
node smoke.cjs
# a consumer that passes the workspace's condition (as the examples' commands do) still runs dist/
node --conditions=@xaalis/source smoke.mjs > /dev/null || { echo "pack-check: --conditions=@xaalis/source broke the packages"; exit 1; }

echo "pack-check: publishing goes through the tarballs"
# npm publish in a package's folder would record the restored manifest (condition included) on the registry
if (cd "$root/packages/core" && npm publish --dry-run > "$work/publish.log" 2>&1); then
  echo "pack-check: npm publish in packages/core was not refused"; exit 1
fi
grep -q "Publish from the packed tarballs" "$work/publish.log" || { cat "$work/publish.log"; exit 1; }
(cd "$root" && bash scripts/publish.sh --dry-run > "$work/release.log" 2>&1) || { cat "$work/release.log"; exit 1; }

echo "pack-check: the xaalis-server bin"
port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
PORT="$port" HOST=127.0.0.1 DATA_DIR="$work/data" ./node_modules/.bin/xaalis-server > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 50); do
  curl -sf "http://127.0.0.1:$port/v1/openapi.json" > /dev/null && break
  sleep 0.2
done
status="$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/v1/test_helpers/businesses" \
  -H 'content-type: application/json' -d '{"name":"bin"}')"
[ "$status" = "201" ] || { echo "xaalis-server answered $status"; cat "$work/server.log"; exit 1; }
kill -TERM "$server"
wait "$server" || true
server=""
grep -q '"msg":"stopped"' "$work/server.log" || { echo "xaalis-server did not stop gracefully"; cat "$work/server.log"; exit 1; }
if grep -q ExperimentalWarning "$work/server.log"; then echo "xaalis-server printed a warning"; cat "$work/server.log"; exit 1; fi
# an operator command of the same bin, on the data the server left
DATA_DIR="$work/data" ./node_modules/.bin/xaalis-server create-business --name cli > "$work/admin.json" 2> "$work/admin.err" \
  || { echo "xaalis-server create-business failed"; cat "$work/admin.err"; exit 1; }
grep -q '"secret_key_live": "sk_live_' "$work/admin.json" || { echo "create-business printed no key"; cat "$work/admin.json"; exit 1; }
echo "pack-check: ok"
