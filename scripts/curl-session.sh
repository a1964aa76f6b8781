#!/usr/bin/env bash
# The README's curl session against a running `npm start` (sandbox on).
# BASE defaults to http://127.0.0.1:3000; HOOK_PORT (default 4000) is a local webhook receiver.
set -euo pipefail
BASE=${BASE:-http://127.0.0.1:3000}
HOOK_PORT=${HOOK_PORT:-4000}
# field NAME: prints one top-level field of the JSON on stdin (node is there since npm is)
field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[process.argv[1]]))' "$1"; }

# from the repository's root, as the README's copy of the steps below runs
cd "$(dirname "$0")/.."

# 1. A sandbox business (no key needed), its webhooks going to a local receiver
BIZ=$(curl -sf -X POST "$BASE/v1/test_helpers/businesses" -H 'content-type: application/json' \
  -d "{\"name\":\"Kairaba Coffee\",\"webhook_url\":\"http://127.0.0.1:$HOOK_PORT/hooks\"}")
echo "$BIZ"
KEY=$(echo "$BIZ" | field secret_key_live)
WEBHOOK_SECRET=$(echo "$BIZ" | field webhook_secret) node scripts/webhook-receiver.mjs "$HOOK_PORT" &
RECEIVER=$!
trap 'kill $RECEIVER 2>/dev/null || true' EXIT
sleep 0.5

# 2. A conversion: 5,000 GMD to the business balance, paid in USDT on TRC20
CONV=$(curl -sf -X POST "$BASE/v1/minting/offramp" -H "authorization: Bearer $KEY" \
  -H 'content-type: application/json' -d '{"gmd_amount":5000,"network":"TRC20"}')
echo "$CONV"
ID=$(echo "$CONV" | field id)
ADDRESS=$(echo "$CONV" | field pay_address)
PAY=$(echo "$CONV" | field pay_amount)

# 3. The stablecoin arrives on the (simulated) chain
curl -sf -X POST "$BASE/v1/test_helpers/chain/transfers" -H "authorization: Bearer $KEY" \
  -H 'content-type: application/json' \
  -d "{\"network\":\"TRC20\",\"currency\":\"USDT\",\"to_address\":\"$ADDRESS\",\"amount\":$PAY}"
echo

# 4. The conversion is paid, with its timeline; the balance holds the dalasi
READ=$(curl -sf "$BASE/v1/minting/ramps/$ID" -H "authorization: Bearer $KEY")
echo "status $(echo "$READ" | field status), actually_paid $(echo "$READ" | field actually_paid)"
curl -sf "$BASE/v1/balance" -H "authorization: Bearer $KEY"
echo

# 5. The webhook (ramp.paid) reached the receiver, signed
sleep 1
