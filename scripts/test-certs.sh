#!/usr/bin/env bash
# Makes a throwaway certificate authority and two certificates signed by it, for TLS tests
# in every language (one source, so the three SDKs' tests trust the same chain):
#   DIR/ca.pem                          the CA (what a client trusts: RUNLATER_TLS_CA)
#   DIR/server.pem, DIR/server-key.pem  for 127.0.0.1, ::1 and localhost (serve --tls-cert/--tls-key);
#                                       also a client certificate, as nodes present theirs to each other
#   DIR/client.pem, DIR/client-key.pem  a client certificate (mTLS: serve --tls-client-ca DIR/ca.pem)
# Usage: scripts/test-certs.sh DIR   (DIR is created; existing files are replaced)
set -euo pipefail
dir=${1:?usage: scripts/test-certs.sh DIR}
mkdir -p "$dir"
cd "$dir"
days=3650
quiet() { "$@" 2>/dev/null; }

quiet openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
  -subj "/CN=runlater test CA" -keyout ca-key.pem -out ca.pem \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"

# sign NAME SUBJECT EXTENSIONS: a P-256 key and a certificate for it, signed by the CA.
sign() {
  local name=$1 subject=$2 ext=$3
  quiet openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$subject" \
    -keyout "$name-key.pem" -out "$name.csr"
  printf '%s\n' "$ext" > "$name.ext"
  quiet openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial \
    -days "$days" -extfile "$name.ext" -out "$name.pem"
  rm -f "$name.csr" "$name.ext"
}
sign server "/CN=localhost" "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost
extendedKeyUsage=serverAuth,clientAuth"
sign client "/CN=runlater test client" "extendedKeyUsage=clientAuth"
# PKCS#8 keys: what Java's and Python's TLS stacks read without conversion.
for key in server-key.pem client-key.pem; do
  openssl pkcs8 -topk8 -nocrypt -in "$key" -out "$key.p8" && mv "$key.p8" "$key"
done
rm -f ca.srl
