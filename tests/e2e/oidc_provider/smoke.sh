#!/usr/bin/env bash
# Smoke test of server.mjs with curl alone, doing what a relying party does (see README.md): the
# authorization code flow with PKCE S256 through the development login page, the token endpoint with
# client_secret_basic and client_secret_post, every tamper kind, and RP-initiated logout.
# Needs node (with `npm ci` done here) and curl. Usage: bash smoke.sh   (prints "N passed, N failed")
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'exec 3>&-; rm -rf "$work"' EXIT
cd "$work"

RU=http://127.0.0.1:9/api/v1/auth/oidc/test/callback   # nothing listens there: we read the Location
SECRET='s3cret-Value_1.~'
cat > cfg.json <<EOF
{"clients":[{"client_id":"cronwheel","client_secret":"$SECRET","redirect_uris":["$RU"],
             "post_logout_redirect_uris":["http://127.0.0.1:9/"]}],
 "accounts":{"alice":{"email":"alice@example.org","name":"Alice","groups":["cw-admins"]},
             "bob":{"email":"bob@example.org","name":"Bob","groups":[]}},
 "max_seconds":120}
EOF

# stdin: a fifo whose write end this shell holds (fd 3); when this script ends, the server sees EOF and exits.
mkfifo in.fifo
node "$here/server.mjs" cfg.json < in.fifo > out.txt 2> err.txt &
server_pid=$!
exec 3> in.fifo
for _ in $(seq 100); do [ -s out.txt ] && break; sleep 0.1; done
ISS=$(node -p "JSON.parse(require('fs').readFileSync('out.txt','utf8')).issuer")
echo "issuer: $ISS (stdout: $(cat out.txt))"

passed=0; failed=0
check() { if [ "$2" = "$3" ]; then passed=$((passed+1)); echo "ok   $1"; else failed=$((failed+1)); echo "FAIL $1: got [$2] want [$3]"; fi; }
js() { node -e "$1" "${@:2}"; }
b64url_sha256() { printf %s "$1" | js 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(require("crypto").createHash("sha256").update(s).digest("base64url")))'; }
payload() { js 'console.log(JSON.stringify(JSON.parse(Buffer.from(process.argv[1].split(".")[1],"base64url"))))' "$1"; }
header() { js 'console.log(JSON.stringify(JSON.parse(Buffer.from(process.argv[1].split(".")[0],"base64url"))))' "$1"; }
field() { js 'const o=JSON.parse(process.argv[1]); const v=o[process.argv[2]]; console.log(typeof v==="object"?JSON.stringify(v):v)' "$1" "$2"; }

# One login as a browser or libcurl does it. Sets CODE, STATE_BACK, VERIFIER, NONCE. $1 = login.
login() {
  rm -f jar
  VERIFIER=$(js 'console.log(require("crypto").randomBytes(32).toString("base64url"))')
  CHALLENGE=$(b64url_sha256 "$VERIFIER")
  NONCE=n-$RANDOM$RANDOM; STATE=s-$RANDOM$RANDOM
  # 1. GET /auth, following redirects: 303 to /interaction/<uid> (sets _interaction, _interaction_resume), 200 login page.
  curl -sS -L -c jar -b jar -o login.html -w '%{http_code} %{url_effective}\n' -G "$ISS/auth" \
    --data-urlencode client_id=cronwheel --data-urlencode response_type=code \
    --data-urlencode "scope=openid profile email groups" --data-urlencode "redirect_uri=$RU" \
    --data-urlencode "state=$STATE" --data-urlencode "nonce=$NONCE" \
    --data-urlencode "code_challenge=$CHALLENGE" --data-urlencode code_challenge_method=S256 > step1.txt
  ACTION=$(grep -o '<form autocomplete="off" action="[^"]*"' login.html | sed 's/.*action="//; s/"$//')
  # 2. POST the form to its action, following redirects: 303 to /auth/<uid> (GET), which answers 303 to the
  #    redirect_uri with code, state and iss (and sets _session). curl stops there: nothing listens on $RU.
  curl -sS -L --max-redirs 1 -c jar -b jar -o /dev/null -w '%{http_code} %{redirect_url}\n' "$ACTION" \
    --data-urlencode prompt=login --data-urlencode "login=$1" --data-urlencode password=anything > step2.txt 2>/dev/null
  LOCATION=$(cut -d' ' -f2- step2.txt)
  CODE=$(js 'const u=new URL(process.argv[1], process.argv[2]); console.log(u.searchParams.get("code")??"")' "$LOCATION" "$ISS")
  STATE_BACK=$(js 'const u=new URL(process.argv[1], process.argv[2]); console.log(u.searchParams.get("state")??"")' "$LOCATION" "$ISS")
}
# The token endpoint with client_secret_basic. Prints the JSON answer.
token_basic() {
  curl -sS -u "cronwheel:$SECRET" "$ISS/token" --data-urlencode grant_type=authorization_code \
    --data-urlencode "code=$CODE" --data-urlencode "redirect_uri=$RU" --data-urlencode "code_verifier=${1:-$VERIFIER}"
}

echo "== plain login (alice)"
login alice
echo "step 1: $(cat step1.txt); form action: $ACTION"
echo "step 2: $(cat step2.txt)"
check "login page is the dev login form" "$(grep -c 'name="login"' login.html)" 1
check "redirect goes to the redirect_uri" "${LOCATION%%\?*}" "$RU"
check "state comes back" "$STATE_BACK" "$STATE"
check "iss in the authorization response" "$(js 'console.log(new URL(process.argv[1]).searchParams.get("iss"))' "$LOCATION")" "$ISS"
check "login page has no external @import" "$(grep -c '@import' login.html)" 0
RESP=$(token_basic)
ID=$(field "$RESP" id_token)
P=$(payload "$ID")
echo "id_token header: $(header "$ID")"
echo "id_token payload: $P"
check "iss" "$(field "$P" iss)" "$ISS"
check "aud" "$(field "$P" aud)" cronwheel
check "nonce" "$(field "$P" nonce)" "$NONCE"
check "sub" "$(field "$P" sub)" alice
check "preferred_username" "$(field "$P" preferred_username)" alice
check "email" "$(field "$P" email)" alice@example.org
check "email_verified" "$(field "$P" email_verified)" true
check "name" "$(field "$P" name)" Alice
check "groups" "$(field "$P" groups)" '["cw-admins"]'
check "alg RS256 with the kid of the JWKS" "$(field "$(header "$ID")" kid)" \
  "$(curl -sS "$ISS/jwks" | js 'console.log(JSON.parse(process.argv[1]).keys[0].kid)' "$(cat)")"
check "code is single-use" "$(field "$(token_basic)" error)" invalid_grant

echo "== client_secret_post, and a wrong code_verifier"
login bob
check "wrong code_verifier refused" "$(field "$(token_basic "${VERIFIER}x")" error)" invalid_grant
login bob
RESP=$(curl -sS "$ISS/token" --data-urlencode grant_type=authorization_code --data-urlencode "code=$CODE" \
  --data-urlencode "redirect_uri=$RU" --data-urlencode "code_verifier=$VERIFIER" \
  --data-urlencode client_id=cronwheel --data-urlencode "client_secret=$SECRET")
check "client_secret_post works, bob's groups" "$(field "$(payload "$(field "$RESP" id_token)")" groups)" '[]'

echo "== second login in the same jar: the session is reused, no login page"
login alice
VERIFIER=$(js 'console.log(require("crypto").randomBytes(32).toString("base64url"))'); CHALLENGE=$(b64url_sha256 "$VERIFIER")
curl -sS -c jar -b jar -o /dev/null -w '%{http_code} %{redirect_url}\n' -G "$ISS/auth" \
  --data-urlencode client_id=cronwheel --data-urlencode response_type=code --data-urlencode "scope=openid email" \
  --data-urlencode "redirect_uri=$RU" --data-urlencode state=x --data-urlencode nonce=y \
  --data-urlencode "code_challenge=$CHALLENGE" --data-urlencode code_challenge_method=S256 > step.txt
echo "   /auth with a _session cookie: $(cat step.txt)"
check "second /auth answers 303 straight to the redirect_uri" "$(cut -d' ' -f1 step.txt) $(cut -d' ' -f2 step.txt | cut -d'?' -f1)" "303 $RU"
CODE=$(js 'console.log(new URL(process.argv[1]).searchParams.get("code"))' "$(cut -d' ' -f2 step.txt)")
check "the reused session gives a token" "$(field "$(payload "$(field "$(token_basic)" id_token)")" sub)" alice

echo "== unknown login: back to the same login page, then a known one goes through"
rm -f jar
VERIFIER=$(js 'console.log(require("crypto").randomBytes(32).toString("base64url"))'); CHALLENGE=$(b64url_sha256 "$VERIFIER")
curl -sS -L -c jar -b jar -o login.html -w '%{http_code} %{url_effective}\n' -G "$ISS/auth" \
  --data-urlencode client_id=cronwheel --data-urlencode response_type=code --data-urlencode "scope=openid groups" \
  --data-urlencode "redirect_uri=$RU" --data-urlencode state=s2 --data-urlencode nonce=n2 \
  --data-urlencode "code_challenge=$CHALLENGE" --data-urlencode code_challenge_method=S256 > step.txt
ACTION=$(grep -o '<form autocomplete="off" action="[^"]*"' login.html | sed 's/.*action="//; s/"$//')
curl -sS -c jar -b jar -o /dev/null -w '%{http_code} %{redirect_url}\n' "$ACTION" \
  --data-urlencode prompt=login --data-urlencode login=mallory --data-urlencode password=x > step2.txt
echo "   POST login=mallory: $(cat step2.txt)"
check "unknown account: 303 back to the same login page" "$(cat step2.txt)" "303 $ACTION"
curl -sS -L --max-redirs 1 -c jar -b jar -o /dev/null -w '%{http_code} %{redirect_url}\n' "$ACTION" \
  --data-urlencode prompt=login --data-urlencode login=alice --data-urlencode password=x > step2.txt 2>/dev/null
echo "   POST login=alice: $(cat step2.txt)"
CODE=$(js 'console.log(new URL(process.argv[1]).searchParams.get("code"))' "$(cut -d' ' -f2 step2.txt)")
check "then alice gets a token" "$(field "$(payload "$(field "$(token_basic)" id_token)")" groups)" '["cw-admins"]'

echo "== tampering"
for kind in signature audience nonce expiry issuer alg_none; do
  st=$(curl -sS -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d "{\"kind\":\"$kind\"}" "$ISS/__test/tamper")
  check "POST /__test/tamper $kind answers 204" "$st" 204
  login alice
  ID=$(field "$(token_basic)" id_token)
  P=$(payload "$ID"); H=$(header "$ID")
  echo "   $kind: header $H"
  echo "   $kind: payload $P"
  echo "   $kind: signature ${ID##*.}"
  case $kind in
    signature) check "signature still base64url, 342 chars" "$(printf %s "${ID##*.}" | grep -cE '^[A-Za-z0-9_-]{342}$')" 1;;
    audience) check "aud" "$(field "$P" aud)" someone-else;;
    nonce) check "nonce" "$(field "$P" nonce)" not-the-nonce;;
    expiry) check "exp in the past" "$(js 'console.log(JSON.parse(process.argv[1]).exp < Date.now()/1000 - 500)' "$P")" true;;
    issuer) check "iss" "$(field "$P" iss)" http://evil.example;;
    alg_none) check "alg none, empty signature" "$(field "$H" alg)|${ID##*.}" "none|";;
  esac
  # Verify with the JWKS as a relying party would: every kind must fail (alg_none is not even RS256).
  verdict=$(cd "$here" && node --input-type=module -e '
    import * as jose from "jose";
    const [iss, token, nonce] = process.argv.slice(1);
    try {
      const { payload } = await jose.jwtVerify(token, jose.createRemoteJWKSet(new URL(iss + "/jwks")),
        { issuer: iss, audience: "cronwheel", algorithms: ["RS256"] });
      console.log(payload.nonce === nonce ? "accepted" : "rejected: nonce mismatch");
    } catch (e) { console.log("rejected: " + e.code); }' "$ISS" "$ID" "$NONCE")
  echo "   $kind: $verdict"
  check "$kind token fails verification" "${verdict%%:*}" rejected
  ID2=$(field "$(login alice; token_basic)" id_token)
  check "$kind applies once: the next token is untouched" "$(field "$(payload "$ID2")" aud)|$(field "$(payload "$ID2")" iss)" "cronwheel|$ISS"
done
check "unknown kind: 400" "$(curl -sS -o /dev/null -w '%{http_code}' -d '{"kind":"x"}' "$ISS/__test/tamper")" 400
check "other /__test path: 404" "$(curl -sS -o /dev/null -w '%{http_code}' "$ISS/__test/other")" 404

echo "== RP-initiated logout"
login alice
ID=$(field "$(token_basic)" id_token)
curl -sS -c jar -b jar -o logout.html -w '%{http_code}\n' -G "$ISS/session/end" --data-urlencode "id_token_hint=$ID" \
  --data-urlencode post_logout_redirect_uri=http://127.0.0.1:9/ --data-urlencode state=bye > step.txt
XSRF=$(grep -o 'name="xsrf" value="[^"]*"' logout.html | sed 's/.*value="//; s/"$//')
check "logout page 200 with the form" "$(cat step.txt) $(grep -c 'action="'"$ISS"'/session/end/confirm"' logout.html)" "200 1"
curl -sS -c jar -b jar -o /dev/null -w '%{http_code} %{redirect_url}\n' "$ISS/session/end/confirm" \
  --data-urlencode "xsrf=$XSRF" --data-urlencode logout=yes > step.txt
echo "   POST /session/end/confirm: $(cat step.txt)"
check "logout redirects to post_logout_redirect_uri with state" "$(cat step.txt)" "303 http://127.0.0.1:9/?state=bye"

echo "== stdout carried exactly one line"
check "stdout lines" "$(wc -l < out.txt)" 1

exec 3>&-   # EOF on the server's stdin
for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
check "server exits when its stdin closes" "$(kill -0 "$server_pid" 2>/dev/null && echo running || echo gone)" gone
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
