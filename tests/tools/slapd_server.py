#!/usr/bin/python3
"""A throwaway OpenLDAP server (Debian's slapd 2.5) on 127.0.0.1 for the LDAP login e2e tests.

Everything lives in a fresh temp directory (TMPDIR is honoured): a throwaway CA (ca.pem) and a server
certificate for IP 127.0.0.1 and DNS localhost (and this host's name, which libldap substitutes for
"localhost") made with the `openssl` command, a cn=config directory made by `slapadd -n0` from the
schemas in /etc/ldap/schema (nothing under /etc/ldap is written, no system service is used), and an mdb
database loaded by `slapadd` before slapd starts. slapd then runs in the foreground (-d 0) as a child of
this script, listening on ldap://127.0.0.1:P1/ (StartTLS available) and ldaps://127.0.0.1:P2/, on free
ports this script picks (a collision with another process is retried on new ports).

Once both listeners answer (an anonymous ldapwhoami over ldaps and one over ldap + StartTLS, both
verifying the certificate against ca.pem), exactly one JSON line is printed to stdout and flushed:

  {"ldap_url":"ldap://127.0.0.1:P1","ldaps_url":"ldaps://127.0.0.1:P2","ca_file":"/tmp/.../ca.pem",
   "base_dn":"dc=example,dc=org","reader_dn":"cn=reader,dc=example,dc=org","reader_password":"reader-secret"}

slapd is stopped (SIGTERM, then SIGKILL after 5 s) and the temp dir removed when stdin reaches EOF (the
parent test closed its end of the pipe, or died), on SIGTERM / SIGINT / SIGHUP, or when --max-seconds
have passed since the script started. slapd is also started with PR_SET_PDEATHSIG, so even a SIGKILL of
this script takes slapd with it (the temp dir is left behind then). Startup failures print slapd's log
to stderr and exit 1; a slapd that dies by itself after being ready makes the script exit 2.

The directory (passwords stored as {SSHA} made by slappasswd):

  dc=example,dc=org                                   (dcObject, organization)
  cn=admin,dc=example,dc=org                          rootdn (no entry), password "admin-secret"
  cn=reader,dc=example,dc=org                         service account, password "reader-secret"
  ou=people,dc=example,dc=org
    uid=alice,ou=people,dc=example,dc=org             inetOrgPerson, password "alice-pass", alice@example.org
    uid=bob,ou=people,dc=example,dc=org               inetOrgPerson, password "bob-pass",   bob@example.org
    uid=carol,ou=people,dc=example,dc=org             inetOrgPerson, password "carol-pass", carol@example.org
  ou=groups,dc=example,dc=org                         groupOfNames below, members are the people's DNs
    cn=cronwheel-admins,ou=groups,dc=example,dc=org   member alice
    cn=payroll-operators,ou=groups,dc=example,dc=org  member bob
    cn=everyone,ou=groups,dc=example,dc=org           members alice, bob, carol

Access (olcAccess of the mdb database; the rootdn bypasses it):
  userPassword: anonymous may bind with it (auth), its owner may change it (=xw), nobody else sees it
  dc=example,dc=org, ou=people (the entries themselves) and the ou=groups subtree: readable by the reader
    and by every authenticated user
  everything else: readable by the reader; each user reads their own entry (not other people's);
    anonymous reads nothing (searches answer noSuchObject, 32)
  the rootDSE and cn=Subschema are readable by anyone.

Usage: slapd_server.py [--max-seconds 900] [--ignore-stdin | --parent-pid PID] [--debug]
  --ignore-stdin  don't stop on stdin EOF (for a manual run with stdin at /dev/null)
  --parent-pid    stop when that process is gone instead of on stdin EOF (tests start it with stdin on /dev/null)
  --debug         slapd logs connections and operations (-d stats) to this script's stderr

Needs the Debian packages slapd, ldap-utils and openssl, and python3's standard library.
"""
import argparse
import ctypes
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

SLAPD = "/usr/sbin/slapd"
SLAPADD = "/usr/sbin/slapadd"
SLAPPASSWD = "/usr/sbin/slappasswd"
MODULE_DIR = "/usr/lib/ldap"
SCHEMA_DIR = "/etc/ldap/schema"
SCHEMAS = ["core", "cosine", "nis", "inetorgperson"]  # in dependency order

BASE_DN = "dc=example,dc=org"
ADMIN_DN = f"cn=admin,{BASE_DN}"
ADMIN_PASSWORD = "admin-secret"
READER_DN = f"cn=reader,{BASE_DN}"
READER_PASSWORD = "reader-secret"
PEOPLE_DN = f"ou=people,{BASE_DN}"
GROUPS_DN = f"ou=groups,{BASE_DN}"
USERS = [  # uid, given name, surname, password
    ("alice", "Alice", "Anders", "alice-pass"),
    ("bob", "Bob", "Brown", "bob-pass"),
    ("carol", "Carol", "Clark", "carol-pass"),
]
GROUPS = [  # cn, description, member uids
    ("cronwheel-admins", "cronwheel administrators", ["alice"]),
    ("payroll-operators", "operators of the payroll jobs", ["bob"]),
    ("everyone", "every user", ["alice", "bob", "carol"]),
]

OPENSSL_CNF = """\
[req]
distinguished_name = dn
prompt = no

[dn]
CN = placeholder

[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[v3_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost{extra_names}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


class StartupAborted(Exception):
    pass


STOP = threading.Event()  # set by SIGTERM/SIGINT/SIGHUP, stdin EOF; startup checks it between its steps
STOP_REASON = []


def check_stop():
    if STOP.is_set():
        raise StartupAborted(STOP_REASON[0] if STOP_REASON else "stop requested")


def log(msg):
    print(f"slapd_server: {msg}", file=sys.stderr, flush=True)


def run_all(commands, cwd, what):
    """Runs the commands in parallel; returns their stdouts; raises with their stderr if one fails."""
    procs = [subprocess.Popen(c, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for c in commands]
    try:
        outs = []
        failed = []
        for c, p in zip(commands, procs):
            out, err = p.communicate(timeout=30)
            outs.append(out.decode())
            if p.returncode != 0:
                failed.append(f"{' '.join(c)} exited {p.returncode}: {err.decode(errors='replace').strip()}")
        if failed:
            raise RuntimeError(f"{what} failed:\n" + "\n".join(failed))
        return outs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def make_certificates(d):
    cnf = os.path.join(d, "openssl.cnf")
    # libldap checks a URL's "localhost" against this machine's own name (ldap_pvt_get_fqdn) instead:
    # name it too, so that ldaps://localhost:P2 verifies as well.
    names = []
    for name in (socket.gethostname(), socket.getfqdn()):
        if name and name != "localhost" and name not in names and re.fullmatch(r"[A-Za-z0-9.-]{1,253}", name):
            names.append(name)
    with open(cnf, "w") as f:
        f.write(OPENSSL_CNF.replace("{extra_names}", "".join(f", DNS:{n}" for n in names)))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run_all([
        ["openssl", "req", "-config", cnf, "-x509", "-new", *ec, "-keyout", "ca.key", "-out", "ca.pem",
         "-days", "3", "-subj", "/O=cronwheel tests/CN=cronwheel throwaway test CA", "-extensions", "v3_ca",
         "-set_serial", "0x" + os.urandom(8).hex()],
        ["openssl", "req", "-config", cnf, "-new", *ec, "-keyout", "server.key", "-out", "server.csr",
         "-subj", "/O=cronwheel tests/CN=127.0.0.1"],
    ], d, "openssl (CA and server key)")
    run_all([
        ["openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
         "-set_serial", "0x" + os.urandom(8).hex(), "-days", "3", "-extfile", cnf, "-extensions", "v3_server",
         "-out", "server.pem"],
    ], d, "openssl (server certificate)")
    os.chmod(os.path.join(d, "ca.key"), 0o600)
    os.chmod(os.path.join(d, "server.key"), 0o600)


def mdb_is_static():
    out = subprocess.run([SLAPD, "-VVV"], stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    text = (out.stdout + out.stderr).decode(errors="replace")
    static = text.split("Included static backends:", 1)[-1].split("Included static overlays:", 1)[0]
    return "mdb" in static.split()


def ldif_value(name, value):
    return f"{name}: {value}\n"


def config_ldif(d, admin_hash, load_mdb_module):
    out = [
        "dn: cn=config\n", "objectClass: olcGlobal\n", "cn: config\n",
        ldif_value("olcPidFile", os.path.join(d, "slapd.pid")),
        ldif_value("olcArgsFile", os.path.join(d, "slapd.args")),
        ldif_value("olcTLSCACertificateFile", os.path.join(d, "ca.pem")),
        ldif_value("olcTLSCertificateFile", os.path.join(d, "server.pem")),
        ldif_value("olcTLSCertificateKeyFile", os.path.join(d, "server.key")),
        "olcTLSVerifyClient: never\n",
        "olcThreads: 8\n",
        "\n",
    ]
    if load_mdb_module:
        out += ["dn: cn=module{0},cn=config\n", "objectClass: olcModuleList\n", "cn: module{0}\n",
                ldif_value("olcModulePath", MODULE_DIR), "olcModuleLoad: back_mdb\n", "\n"]
    out += ["dn: cn=schema,cn=config\n", "objectClass: olcSchemaConfig\n", "cn: schema\n", "\n"]
    for name in SCHEMAS:
        with open(os.path.join(SCHEMA_DIR, f"{name}.ldif")) as f:
            out += [f.read().rstrip("\n") + "\n", "\n"]
    reader = f'dn.exact="{READER_DN}"'
    out += [
        "dn: olcDatabase={-1}frontend,cn=config\n",
        "objectClass: olcDatabaseConfig\n", "objectClass: olcFrontendConfig\n",
        "olcDatabase: {-1}frontend\n",
        'olcAccess: {0}to dn.base="" by * read\n',
        'olcAccess: {1}to dn.base="cn=Subschema" by * read\n',
        "olcSizeLimit: 500\n",
        "\n",
        "dn: olcDatabase={0}config,cn=config\n", "objectClass: olcDatabaseConfig\n",
        "olcDatabase: {0}config\n", "olcAccess: {0}to * by * none\n", "\n",
        "dn: olcDatabase={1}mdb,cn=config\n",
        "objectClass: olcDatabaseConfig\n", "objectClass: olcMdbConfig\n",
        "olcDatabase: {1}mdb\n",
        ldif_value("olcDbDirectory", os.path.join(d, "data")),
        ldif_value("olcSuffix", BASE_DN),
        ldif_value("olcRootDN", ADMIN_DN),
        ldif_value("olcRootPW", admin_hash),
        "olcDbNoSync: TRUE\n",
        "olcDbMaxSize: 16777216\n",
        "olcDbIndex: objectClass eq\n",
        "olcDbIndex: uid,cn,mail eq\n",
        "olcDbIndex: member eq\n",
        "olcAccess: {0}to attrs=userPassword by self =xw by anonymous auth by * none\n",
        # The containers, so that a user's own search under them finds what the user may read.
        f'olcAccess: {{1}}to dn.base="{BASE_DN}" by {reader} read by users read by * none\n',
        f'olcAccess: {{2}}to dn.base="{PEOPLE_DN}" by {reader} read by users read by * none\n',
        f'olcAccess: {{3}}to dn.subtree="{GROUPS_DN}" by {reader} read by users read by * none\n',
        f"olcAccess: {{4}}to * by {reader} read by self read by * none\n",
        "\n",
    ]
    return "".join(out)


def data_ldif(hashes):
    out = [
        f"dn: {BASE_DN}\n", "objectClass: top\n", "objectClass: dcObject\n", "objectClass: organization\n",
        "dc: example\n", "o: Example Org\n", "\n",
        f"dn: {READER_DN}\n", "objectClass: organizationalRole\n", "objectClass: simpleSecurityObject\n",
        "cn: reader\n", "description: read-only service account of cronwheel\n",
        ldif_value("userPassword", hashes["reader"]), "\n",
        f"dn: {PEOPLE_DN}\n", "objectClass: organizationalUnit\n", "ou: people\n", "\n",
        f"dn: {GROUPS_DN}\n", "objectClass: organizationalUnit\n", "ou: groups\n", "\n",
    ]
    for uid, given, sn, _ in USERS:
        out += [f"dn: uid={uid},{PEOPLE_DN}\n", "objectClass: inetOrgPerson\n",
                f"uid: {uid}\n", f"cn: {given} {sn}\n", f"givenName: {given}\n", f"sn: {sn}\n",
                f"displayName: {given} {sn}\n", f"mail: {uid}@example.org\n",
                ldif_value("userPassword", hashes[uid]), "\n"]
    for cn, description, members in GROUPS:
        out += [f"dn: cn={cn},{GROUPS_DN}\n", "objectClass: groupOfNames\n", f"cn: {cn}\n",
                f"description: {description}\n"]
        out += [f"member: uid={m},{PEOPLE_DN}\n" for m in members]
        out += ["\n"]
    return "".join(out)


def build_directory(d):
    """Certificates, cn=config (slapd.d) and the loaded mdb database in d."""
    passwords = {"admin": ADMIN_PASSWORD, "reader": READER_PASSWORD}
    passwords.update({uid: pw for uid, _, _, pw in USERS})
    names = list(passwords)
    hash_cmds = [[SLAPPASSWD, "-n", "-h", "{SSHA}", "-s", passwords[n]] for n in names]
    # openssl and slappasswd don't depend on each other: run them side by side.
    cert_thread_error = []

    def certs():
        try:
            make_certificates(d)
        except Exception as e:  # noqa: BLE001 - reported by the caller
            cert_thread_error.append(e)

    t = threading.Thread(target=certs)
    t.start()
    try:
        hashes = dict(zip(names, (h.strip() for h in run_all(hash_cmds, d, "slappasswd"))))
        load_mdb_module = not mdb_is_static()
    finally:
        t.join()
    if cert_thread_error:
        raise cert_thread_error[0]
    conf_dir = os.path.join(d, "slapd.d")
    os.mkdir(conf_dir, 0o700)
    os.mkdir(os.path.join(d, "data"), 0o700)
    with open(os.path.join(d, "config.ldif"), "w") as f:
        f.write(config_ldif(d, hashes["admin"], load_mdb_module))
    with open(os.path.join(d, "data.ldif"), "w") as f:
        f.write(data_ldif(hashes))
    run_all([[SLAPADD, "-n0", "-F", conf_dir, "-l", os.path.join(d, "config.ldif")]], d, "slapadd (cn=config)")
    run_all([[SLAPADD, "-q", "-n1", "-F", conf_dir, "-l", os.path.join(d, "data.ldif")]], d, "slapadd (data)")
    return conf_dir


def free_ports(n):
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def die_with_parent(parent):
    """preexec_fn of slapd: SIGTERM it when this script (pid parent) dies, even by SIGKILL."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort
        pass
    if os.getppid() != parent:
        os._exit(1)
    os.setpgrp()  # a Ctrl-C in a terminal reaches this script only; it stops slapd itself


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def tls_env(ca_file):
    env = dict(os.environ)
    env.pop("LDAPNOINIT", None)
    env["LDAPTLS_CACERT"] = ca_file
    env["LDAPTLS_REQCERT"] = "demand"
    return env


def start_slapd(d, conf_dir, debug, deadline, children):
    """Starts slapd on two free ports, retrying on a port collision; returns (proc, p1, p2).
    Every slapd started is appended to children first, so that the caller stops it whatever happens."""
    ca_file = os.path.join(d, "ca.pem")
    log_path = os.path.join(d, "slapd.log")
    last_log = ""
    me = os.getpid()
    for attempt in range(6):
        last_log = ""
        p1, p2 = free_ports(2)
        urls = f"ldap://127.0.0.1:{p1}/ ldaps://127.0.0.1:{p2}/"
        log_file = None if debug else open(log_path, "wb")
        proc = subprocess.Popen([SLAPD, "-d", "stats" if debug else "0", "-F", conf_dir, "-h", urls],
                                cwd=d, stdin=subprocess.DEVNULL, stdout=log_file or sys.stderr,
                                stderr=subprocess.STDOUT, preexec_fn=lambda: die_with_parent(me))
        children.append(proc)
        if log_file:
            log_file.close()
        listening = False
        while time.monotonic() < deadline and proc.poll() is None:
            check_stop()
            if port_open(p1):  # the plain port: a bare connect to the ldaps one logs a TLS failure
                listening = True
                break
            time.sleep(0.01)
        # Ask slapd itself over both listeners, verifying its certificate: this also catches another process
        # having taken one of the ports between free_ports() and slapd's bind.
        checks = [["ldapwhoami", "-x", "-o", "nettimeout=5", "-H", f"ldaps://127.0.0.1:{p2}"],
                  ["ldapwhoami", "-x", "-o", "nettimeout=5", "-ZZ", "-H", f"ldap://127.0.0.1:{p1}"]]
        checks_until = min(deadline, time.monotonic() + 3)
        while listening and proc.poll() is None:
            check_stop()
            runs = [subprocess.Popen(c, env=tls_env(ca_file), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE) for c in checks]
            results = [(r.communicate(timeout=15), r.returncode) for r in runs]
            if proc.poll() is None and all(rc == 0 for _, rc in results):
                return proc, p1, p2
            last_log = "\n".join(f"{' '.join(c)} -> {rc}: {err.decode(errors='replace').strip()}"
                                 for c, ((_, err), rc) in zip(checks, results))
            if time.monotonic() >= checks_until:
                break
            time.sleep(0.05)
        stop_process(proc)
        if not debug and os.path.exists(log_path):
            with open(log_path, errors="replace") as f:
                last_log += "\n" + f.read()
        if time.monotonic() >= deadline:
            break
        log(f"slapd attempt {attempt + 1} on ports {p1}/{p2} did not come up; retrying")
    raise RuntimeError(f"slapd did not start:\n{last_log.strip()}")


def stdin_closed(timeout):
    """Waits up to timeout for stdin; True once it is at EOF (or not open at all). Input is discarded."""
    try:
        readable, _, _ = select.select([0], [], [], timeout)
        return bool(readable) and os.read(0, 65536) == b""
    except OSError:
        return True


def stop_process(proc):
    if proc is None or proc.poll() is not None:
        return
    try:
        proc.terminate()
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-seconds", type=float, default=900.0,
                        help="stop by itself after this many seconds (default 900)")
    parser.add_argument("--ignore-stdin", action="store_true", help="don't stop when stdin reaches EOF")
    parser.add_argument("--parent-pid", type=int, default=0,
                        help="stop when this process is gone (checked every 0.2 s; implies --ignore-stdin)")
    parser.add_argument("--debug", action="store_true", help="slapd -d stats to stderr")
    parser.add_argument("--start-timeout", type=float, default=30.0, help="give up starting after this (s)")
    args = parser.parse_args()

    started = time.monotonic()
    stop, reason = STOP, STOP_REASON

    def on_signal(signum, _frame):
        reason.append(signal.Signals(signum).name)
        stop.set()

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)

    d = None
    children = []
    code = 0
    try:
        d = tempfile.mkdtemp(prefix="cronwheel-slapd-")
        os.chmod(d, 0o700)
        conf_dir = build_directory(d)
        check_stop()
        deadline = min(started + args.start_timeout, started + args.max_seconds)
        proc, p1, p2 = start_slapd(d, conf_dir, args.debug, deadline, children)
        check_stop()
        info = {
            "ldap_url": f"ldap://127.0.0.1:{p1}",
            "ldaps_url": f"ldaps://127.0.0.1:{p2}",
            "ca_file": os.path.join(d, "ca.pem"),
            "base_dn": BASE_DN,
            "reader_dn": READER_DN,
            "reader_password": READER_PASSWORD,
        }
        try:
            sys.stdout.write(json.dumps(info, separators=(",", ":")) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            reason.append("stdout closed")
            stop.set()
        log(f"ready in {time.monotonic() - started:.2f} s, slapd pid {proc.pid}, dir {d}")

        watch_stdin = not args.ignore_stdin and args.parent_pid == 0
        end = started + args.max_seconds
        while not stop.is_set():
            left = end - time.monotonic()
            if left <= 0:
                reason.append(f"--max-seconds {args.max_seconds:g} passed")
                break
            if watch_stdin and stdin_closed(min(left, 0.2)):
                reason.append("stdin closed")
                break
            if not watch_stdin:
                stop.wait(min(left, 0.2))
            if args.parent_pid and not os.path.exists(f"/proc/{args.parent_pid}"):
                reason.append(f"parent {args.parent_pid} is gone")
                break
            if proc.poll() is not None:
                reason.append(f"slapd exited by itself with {proc.returncode}")
                code = 2
                break
        log(f"stopping: {reason[0] if reason else 'done'}")
    except StartupAborted as e:
        log(f"stopping during startup: {e}")
        code = 1
    except Exception as e:  # noqa: BLE001 - any startup failure: report, clean up, exit 1
        log(f"failed: {e}")
        code = 1
    finally:
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)  # finish cleaning up whatever comes now
        for child in children:
            stop_process(child)
        if d is not None:
            shutil.rmtree(d, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
