#!/usr/bin/python3
"""Runs across hosts made of Linux network namespaces (issue 26; ctest -L
multihost).

    /usr/bin/python3 tests/multihost/multihost_test.py SS [CASE...]

Each "host" is a network namespace with its own veth on a bridge, a
private address on 10.231.7.0/24 (which exists only inside this machine),
its own /tmp and /dev/shm (a mount namespace, `unshare --mount`) and an
sshd (Debian's openssh-server) that takes a test key. The controller runs
here, in the root namespace, at 10.231.7.1; `ss run --hosts` starts each
worker through ssh, as on real hosts: `ssh -F CONFIG -o BatchMode=yes
{host} {cmd}`, the default template with a config file that names the test
key (ssh reads ~/.ssh of the user's passwd entry, which a test must not
touch).

Cases (all by default):
  same_bits      the README MLP on 2 hosts, and a shard params + split H
                 program on 3: the logs, prints and checkpoints of the
                 local `cpu[...]` run, bit for bit
  deterministic  deterministic mode on 3 hosts, and with shard params on 2:
                 the prints, the csv log and the checkpoint of ONE device
                 here, bit for bit (issue 28)
  kill_worker    kill -9 of a remote worker: WorkerError naming its host
                 and the signal, in under 1 s
  link_down      the host's veth down: WorkerError within the heartbeat
                 timeout ("unreachable")
  stranger       a third namespace connects to every port the job has
                 open (silent, garbage, a huge frame header, and `ss
                 worker` with a wrong key): each refused, the job's
                 results unchanged
  kill_controller  SIGKILL to `ss run`: no process of the job in any
                 namespace, and nothing in their /tmp and /dev/shm, within
                 the heartbeat timeout
  manual         `ss run --listen ADDR:PORT --token-file F` and, in two
                 namespaces, `ss worker --connect ADDR:PORT --token-file F`
                 started by hand: the local run's results, bit for bit
  dataset        a streamed dataset in a folder every host sees trains as
                 on one host; one in the controller's /tmp, which the
                 hosts do not have, and one a host holds another copy of,
                 are errors naming the file and the host

Needs root (namespaces, veths, a bridge) and sshd; where either is missing
it prints why and exits 77, which ctest reports as skipped.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
NET = "10.231.7"
BRIDGE = "ssmhbr0"
HOSTS = 3
# The links' MTU: a veth's largest, as loopback's. With 1500 a bridged
# packet's cost on these 2-core machines (about 5 us a packet through two
# veths and the bridge) is the step's: the README MLP's 800 KB gradient is
# 550 packets each way, 3 ms of a 1 ms step. Jumbo frames are what a
# cluster's fabric uses; this only keeps the test machine's cost of a
# packet from standing in for the network's.
MTU = 65535
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def sh(*cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, capture_output=True, text=True,
                          **kw)


def skip_reason():
    if os.geteuid() != 0:
        return "needs root (network namespaces, veths, a bridge)"
    for tool in ("/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen",
                 "/usr/bin/unshare"):
        if not os.path.exists(tool):
            return (f"{tool} is missing (sudo SS_MULTIHOST_TESTS=1 "
                    "scripts/setup.sh installs openssh-server)")
    probe = "ssmh-probe"
    r = sh("ip", "netns", "add", probe, check=False)
    if r.returncode != 0:
        return "cannot make a network namespace: " + r.stderr.strip()
    sh("ip", "netns", "del", probe, check=False)
    return None


class Hosts:
    """The namespaces, their sshds, and the key and configs they use."""

    def __init__(self, ss):
        # Not under /tmp: each host mounts its own /tmp.
        self.dir = tempfile.mkdtemp(prefix="ssmh.", dir="/var/tmp")
        self.ss = os.path.join(self.dir, "ss")
        shutil.copy(ss, self.ss)  # one path on every host, as the docs say
        self.sshd = []
        self.names = [f"ssmh-h{i}" for i in range(1, HOSTS + 1)]
        self.addrs = [f"{NET}.{10 + i}" for i in range(1, HOSTS + 1)]

    def __enter__(self):
        try:
            self._keys()
            self._network()
            for name, addr in zip(self.names, self.addrs):
                self._sshd(name, addr)
            self._wait_for_sshd()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _keys(self):
        d = self.dir
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/id")
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/hostkey")
        shutil.copy(f"{d}/id.pub", f"{d}/authorized_keys")
        with open(f"{d}/sshd_config", "w") as f:
            f.write(f"HostKey {d}/hostkey\nAuthorizedKeysFile {d}/authorized_keys\n"
                    "PermitRootLogin prohibit-password\nStrictModes no\n"
                    "UsePAM no\nPasswordAuthentication no\nPidFile none\n"
                    "LogLevel ERROR\n")
        with open(f"{d}/ssh_config", "w") as f:
            f.write(f"Host *\n  IdentityFile {d}/id\n  IdentitiesOnly yes\n"
                    "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n"
                    "  LogLevel ERROR\n  ConnectTimeout 5\n")
        os.makedirs("/run/sshd", exist_ok=True)
        self.launch = f"ssh -F {d}/ssh_config -o BatchMode=yes {{host}} {{cmd}}"

    def _network(self):
        sh("ip", "link", "del", BRIDGE, check=False)  # a crashed run's
        sh("ip", "link", "add", BRIDGE, "type", "bridge")
        sh("ip", "addr", "add", f"{NET}.1/24", "dev", BRIDGE)
        sh("ip", "link", "set", BRIDGE, "up")
        for i, (name, addr) in enumerate(zip(self.names, self.addrs), 1):
            # A crashed run's: a process left in a namespace keeps its
            # veth after the namespace's name is gone.
            sh("ip", "netns", "del", name, check=False)
            sh("ip", "link", "del", f"ssmh-v{i}", check=False)
            sh("ip", "netns", "add", name)
            sh("ip", "link", "add", f"ssmh-v{i}", "type", "veth", "peer",
               "name", "eth0", "netns", name)
            sh("ip", "link", "set", f"ssmh-v{i}", "mtu", str(MTU), "master",
               BRIDGE, "up")
            for cmd in (["ip", "addr", "add", f"{addr}/24", "dev", "eth0"],
                        ["ip", "link", "set", "eth0", "mtu", str(MTU), "up"],
                        ["ip", "link", "set", "lo", "up"]):
                sh("ip", "netns", "exec", name, *cmd)

    def _sshd(self, name, addr):
        # Its own /tmp and /dev/shm: what a job leaves there is seen.
        script = ("mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /dev/shm"
                  f" && exec /usr/sbin/sshd -D -e -f {self.dir}/sshd_config"
                  f" -o ListenAddress={addr}")
        p = subprocess.Popen(["ip", "netns", "exec", name, "unshare",
                              "--mount", "--propagation", "private", "sh",
                              "-c", script], stdout=subprocess.DEVNULL,
                             stderr=open(f"{self.dir}/sshd_{name}.log", "w"))
        self.sshd.append(p)

    def _wait_for_sshd(self):
        for addr in self.addrs:
            deadline = time.time() + 10
            while True:
                r = sh("ssh", "-F", f"{self.dir}/ssh_config", "-o",
                       "BatchMode=yes", addr, "true", check=False)
                if r.returncode == 0:
                    break
                if time.time() > deadline:
                    raise RuntimeError(f"sshd at {addr} did not answer: "
                                       f"{r.stderr.strip()}")
                time.sleep(0.2)

    def in_host(self, i, *cmd):
        """[cmd] in host i's namespaces (its network and its mounts)."""
        return sh("nsenter", "-t", str(self.sshd[i].pid), "-n", "-m", *cmd,
                  check=False)

    def __exit__(self, *exc):
        for p in self.sshd:
            p.terminate()
        for p in self.sshd:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        for name in self.names:
            sh("ip", "netns", "del", name, check=False)
        sh("ip", "link", "del", BRIDGE, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


class Report:
    def __init__(self):
        self.failures = []

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.failures.append(what)


def program(name):
    return os.path.join(ROOT, name)


def run_ss(h, folder, prog, devices, hosts=None, extra=(), timeout=300):
    cmd = [h.ss, "run", prog, "--devices", devices]
    if hosts:
        cmd += ["--hosts", hosts, "--launch", h.launch] + list(extra)
    return subprocess.run(cmd, cwd=folder, capture_output=True, text=True,
                          timeout=timeout)


def without_timings(text):
    # The progress bars' lines carry their speed; the rest is the program's.
    return [l for l in text.splitlines() if " it/s" not in l]


def same_files(a, b):
    names = sorted(os.listdir(a))
    if names != sorted(os.listdir(b)):
        return f"{names} vs {sorted(os.listdir(b))}"
    for n in names:
        with open(os.path.join(a, n), "rb") as x, \
                open(os.path.join(b, n), "rb") as y:
            if x.read() != y.read():
                return f"{n} differs"
    return ""


def case_same_bits(h, r):
    cases = [("examples/readme_mlp.ss", "cpu[0 1]", 2),
             ("conformance/dist/split_heads_sharded.ss", "cpu[0 1 2]", 3)]
    for prog, devices, n in cases:
        hosts = ",".join(f"{a}:1" for a in h.addrs[:n])
        with tempfile.TemporaryDirectory() as local, \
                tempfile.TemporaryDirectory() as remote:
            t0 = time.time()
            a = run_ss(h, local, program(prog), devices)
            t1 = time.time()
            b = run_ss(h, remote, program(prog), devices, hosts)
            t2 = time.time()
            what = f"{prog} on {n} hosts"
            r.check(a.returncode == 0 and b.returncode == 0,
                    f"{what}: both runs ok ({a.returncode}, {b.returncode})"
                    + ("" if b.returncode == 0 else "\n" + b.stderr[-2000:]))
            r.check(a.stdout == b.stdout,
                    f"{what}: the same output, bit for bit")
            r.check(without_timings(a.stderr) == without_timings(b.stderr),
                    f"{what}: the same stderr but for the progress speeds")
            diff = same_files(local, remote)
            r.check(diff == "", f"{what}: the same files, bit for bit "
                                f"({', '.join(sorted(os.listdir(local)))})"
                    + (f": {diff}" if diff else ""))
            print(f"     local {t1 - t0:.1f} s, {n} hosts {t2 - t1:.1f} s")


def case_deterministic(h, r):
    # Deterministic mode (Note [Deterministic mode] in
    # interp/devices/lower/chunks.h): not the same layout over hosts, but
    # one device against several hosts.
    cases = [("conformance/deterministic/readme_mlp.ss", 3, ()),
             ("conformance/dist/shard_params_sgd_checkpoint.ss", 2,
              ("--deterministic",))]
    for prog, n, extra in cases:
        hosts = ",".join(f"{a}:1" for a in h.addrs[:n])
        devices = "cpu[" + " ".join(str(i) for i in range(n)) + "]"
        with tempfile.TemporaryDirectory() as local, \
                tempfile.TemporaryDirectory() as remote:
            a = subprocess.run([h.ss, "run", program(prog), "--devices",
                                "cpu"] + list(extra), cwd=local,
                               capture_output=True, text=True, timeout=300)
            b = run_ss(h, remote, program(prog), devices, hosts, extra)
            what = f"{prog} deterministic, one device and {n} hosts"
            r.check(a.returncode == 0 and b.returncode == 0,
                    f"{what}: both runs ok ({a.returncode}, {b.returncode})"
                    + ("" if b.returncode == 0 else "\n" + b.stderr[-2000:]))
            r.check(a.stdout == b.stdout and a.stdout != "",
                    f"{what}: the same output, bit for bit")
            diff = same_files(local, remote)
            r.check(diff == "", f"{what}: the same files, bit for bit "
                                f"({', '.join(sorted(os.listdir(local)))})"
                    + (f": {diff}" if diff else ""))


def workers_of(h, host):
    """The pids of the `ss worker` processes that do the work in host i
    (the supervisor's children: Note [A remote worker's supervisor])."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            stat = open(f"/proc/{pid}/stat").read()
            netns = os.readlink(f"/proc/{pid}/ns/net")
        except OSError:
            continue
        if len(cmd) < 2 or cmd[1] != b"worker":
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        try:
            parent = open(f"/proc/{ppid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        host_ns = os.readlink(f"/proc/{h.sshd[host].pid}/ns/net")
        if netns == host_ns and len(parent) > 1 and parent[1] == b"worker":
            out.append(int(pid))
    return out


def long_training(folder):
    # The README MLP, for long enough to be interrupted.
    src = open(program("examples/readme_mlp.ss")).read()
    src = src.replace("for epoch in range(3):", "for epoch in range(1000):")
    path = os.path.join(folder, "long.ss")
    with open(path, "w") as f:
        f.write(src)
    return path


def start_long(h, folder, n, extra=()):
    hosts = ",".join(f"{a}:1" for a in h.addrs[:n])
    cmd = [h.ss, "run", long_training(folder), "--devices",
           "cpu[" + " ".join(map(str, range(n))) + "]", "--hosts", hosts,
           "--launch", h.launch] + list(extra)
    err = open(os.path.join(folder, "err.txt"), "w")
    p = subprocess.Popen(cmd, cwd=folder, stdout=subprocess.DEVNULL,
                         stderr=err)
    # Running once train.csv has lines.
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if open(os.path.join(folder, "train.csv")).read().count("\n") > 3:
                return p
        except OSError:
            pass
        time.sleep(0.05)
    p.kill()
    raise RuntimeError("the long run did not start:\n" +
                       open(os.path.join(folder, "err.txt")).read())


def wait_exit(p, limit):
    t0 = time.time()
    try:
        rc = p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        rc = None
    return rc, time.time() - t0


def nothing_left(h, r, what, limit=12):
    deadline = time.time() + limit
    while time.time() < deadline:
        left = [w for i in range(HOSTS) for w in workers_of(h, i)]
        ssh_left = sh("pgrep", "-f", "ss worker --connect", check=False)
        if not left and not ssh_left.stdout.strip():
            break
        time.sleep(0.1)
    r.check(not left and not ssh_left.stdout.strip(),
            f"{what}: no process of the job in any namespace")
    for i in range(HOSTS):
        files = h.in_host(i, "sh", "-c", "ls -A /tmp /dev/shm").stdout
        names = [l for l in files.splitlines() if l and not l.endswith(":")]
        r.check(not names, f"{what}: nothing in host {i + 1}'s /tmp and "
                           f"/dev/shm {names if names else ''}")


def case_kill_worker(h, r):
    with tempfile.TemporaryDirectory() as folder:
        p = start_long(h, folder, 3)
        victims = workers_of(h, 1)
        r.check(len(victims) == 1, f"kill_worker: host 2 runs one worker "
                                   f"({victims})")
        t0 = time.time()
        os.kill(victims[0], signal.SIGKILL)
        rc, _ = wait_exit(p, 30)
        dt = time.time() - t0
        err = open(os.path.join(folder, "err.txt")).read()
        r.check(rc == 3, f"kill_worker: exit 3 (got {rc})")
        r.check(f"worker 1 (pid {victims[0]} on {h.addrs[1]}) was killed by "
                "signal 9 (SIGKILL)" in err,
                "kill_worker: the WorkerError names the worker, its host and "
                "the signal\n" + err[-1500:])
        r.check(dt < 1.0, f"kill_worker: WorkerError in {dt:.2f} s (< 1 s)")
        nothing_left(h, r, "kill_worker")


def case_link_down(h, r):
    with tempfile.TemporaryDirectory() as folder:
        p = start_long(h, folder, 2, ["--heartbeat-timeout", "3"])
        t0 = time.time()
        sh("ip", "link", "set", "ssmh-v2", "down")
        try:
            rc, _ = wait_exit(p, 30)
            dt = time.time() - t0
        finally:
            sh("ip", "link", "set", "ssmh-v2", "up")
        err = open(os.path.join(folder, "err.txt")).read()
        r.check(rc == 3, f"link_down: exit 3 (got {rc})")
        r.check(f"on {h.addrs[1]}) is unreachable: nothing came from it for "
                "3 s (the heartbeat timeout)" in err,
                "link_down: the WorkerError says the host is unreachable\n"
                + err[-1500:])
        r.check(2.0 < dt < 6.0, f"link_down: WorkerError in {dt:.2f} s "
                                "(heartbeat timeout 3 s)")
        nothing_left(h, r, "link_down")


def listening_ports(pid):
    """The TCP ports process [pid] listens on (its /proc/PID/net/tcp, its
    sockets' inodes)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", link)
        if m:
            inodes.add(m.group(1))
    ports = []
    for line in open(f"/proc/{pid}/net/tcp").read().splitlines()[1:]:
        f = line.split()
        if f[3] == "0A" and f[9] in inodes:  # LISTEN
            ip_hex, port_hex = f[1].split(":")
            ip = socket.inet_ntoa(bytes.fromhex(ip_hex)[::-1])
            ports.append((ip, int(port_hex, 16)))
    return ports


STRANGER = r'''
import socket, sys, time
for host, port in [tuple(a.split(":")) for a in sys.argv[1:]]:
    for payload in [b"", b"\x00" * 7, b"GET / HTTP/1.0\r\n\r\n",
                    b"\xff" * 24 + b"x" * 1000, bytes(range(256)) * 4]:
        try:
            s = socket.create_connection((host, int(port)), timeout=2)
            if payload:
                s.sendall(payload)
            time.sleep(0.05)
            s.close()
        except OSError as e:
            pass
print("stranger done")
'''


def case_stranger(h, r):
    with tempfile.TemporaryDirectory() as local, \
            tempfile.TemporaryDirectory() as remote:
        prog = program("examples/readme_mlp.ss")
        a = run_ss(h, local, prog, "cpu[0 1]")
        p = subprocess.Popen([h.ss, "run", prog, "--devices", "cpu[0 1]",
                              "--hosts", f"{h.addrs[0]}:1,{h.addrs[1]}:1",
                              "--launch", h.launch], cwd=remote,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        # Once the workers run: the controller's ports and the workers'.
        targets = []
        deadline = time.time() + 30
        while time.time() < deadline and not (workers_of(h, 0) and
                                              workers_of(h, 1)):
            time.sleep(0.05)
        time.sleep(0.5)
        for ip, port in listening_ports(p.pid):
            targets.append(f"{NET}.1:{port}" if ip == "0.0.0.0" else
                           f"{ip}:{port}")
        for i in (0, 1):
            for w in workers_of(h, i):
                for ip, port in listening_ports(w):
                    targets.append(f"{h.addrs[i]}:{port}")
        s = sh("ip", "netns", "exec", h.names[2], "/usr/bin/python3", "-c",
               STRANGER, *targets, check=False)
        # A real worker with a wrong key, at each of the controller's ports.
        wrong = os.path.join(h.dir, "wrong.key")
        if not os.path.exists(wrong):
            with open(os.open(wrong, os.O_WRONLY | os.O_CREAT, 0o600),
                      "w") as f:
                f.write(os.urandom(32).hex() + "\n")
        refused = [sh("ip", "netns", "exec", h.names[2], h.ss, "worker",
                      "--connect", t, "--token-file", wrong,
                      check=False, timeout=30)
                   for t in targets[:2]]
        out, err = p.communicate(timeout=300)
        # The controller's: its control port and its store. The workers'
        # Gloo pairs listen only while they join (then each takes its one
        # proven connection and closes its listener: Note [A proof before
        # Gloo reads]); a stranger then is interp/tests/
        # stranger_process_test.cpp's.
        r.check(len(targets) >= 2, f"stranger: connected to {len(targets)} "
                                   f"ports of the job ({', '.join(targets)})")
        r.check("stranger done" in s.stdout, "stranger: ran " + s.stderr[-300:])
        r.check(all(w.returncode == 2 and "did not prove it holds this "
                    "job's key" in w.stderr for w in refused),
                "stranger: a worker with a wrong key is refused at each "
                "port: " + "; ".join(w.stderr.strip() for w in refused))
        r.check(p.returncode == 0, f"stranger: the job went on and ended "
                                   f"(exit {p.returncode})\n" + err[-1500:])
        r.check(out == a.stdout and same_files(local, remote) == "",
                "stranger: the job's results are the local run's, bit for "
                "bit")


def case_kill_controller(h, r):
    with tempfile.TemporaryDirectory() as folder:
        p = start_long(h, folder, 3)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        nothing_left(h, r, "kill_controller", limit=10)


def case_manual(h, r):
    prog = program("examples/readme_mlp.ss")
    key = os.path.join(h.dir, "job.key")
    with tempfile.TemporaryDirectory() as local, \
            tempfile.TemporaryDirectory() as remote:
        a = run_ss(h, local, prog, "cpu[0 1]")
        port = 29517
        p = subprocess.Popen([h.ss, "run", prog, "--devices", "cpu[0 1]",
                              "--listen", f"{NET}.1:{port}", "--token-file",
                              key], cwd=remote, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        for _ in range(200):  # the controller makes the key file
            if os.path.exists(key):
                break
            time.sleep(0.05)
        mode = oct(os.stat(key).st_mode & 0o777)
        workers = [subprocess.Popen(
            ["nsenter", "-t", str(h.sshd[i].pid), "-n", "-m", h.ss, "worker",
             "--connect", f"{NET}.1:{port}", "--token-file", key],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for i in (0, 1)]
        out, err = p.communicate(timeout=300)
        codes = [w.wait(timeout=30) for w in workers]
        r.check(mode == "0o600", f"manual: the key file is made mode 0600 "
                                 f"({mode})")
        r.check(p.returncode == 0 and codes == [0, 0],
                f"manual: the run and both workers ended well "
                f"({p.returncode}, {codes})\n" + err[-1500:])
        r.check(out == a.stdout and same_files(local, remote) == "",
                "manual: the local run's results, bit for bit")


STREAMED = """devices cpu

dim D = 6
dim C = 4

data Item:
    x: [D]
    label: i64 in 0..C

model Classifier:
    w: [D C] = normal(std=1.0)

fn xent(m: Classifier, batch: [b] Item) -> f32:
    return cross_entropy(batch.x @ m.w, batch.label)

fn train_step(mut m: Classifier, mut opt: AdamW[Classifier],
              batch: [b] Item) -> Logs:
    let l, g = value_and_grad(xent, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let ds = dataset(Item, "data", stream=true)
    let m = Classifier.init(seed=0)
    let opt = adamw(m, lr=1e-2)
    let out = stdout()
    for batch in ds.batches(12):
        out.write(train_step(m, opt, batch))
"""


def write_streamed(folder, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    os.makedirs(os.path.join(folder, "data"), exist_ok=True)
    np.save(os.path.join(folder, "data", "x.npy"),
            rng.normal(size=(48, 6)).astype(np.float32))
    np.save(os.path.join(folder, "data", "label.npy"),
            rng.integers(0, 4, size=48).astype(np.int64))
    with open(os.path.join(folder, "streamed.ss"), "w") as f:
        f.write(STREAMED)


def case_dataset(h, r):
    hosts = f"{h.addrs[0]}:1,{h.addrs[1]}:1"
    # Where every host sees it (a shared file system's part).
    shared = tempfile.mkdtemp(dir=h.dir)
    write_streamed(shared, 0)
    a = run_ss(h, shared, "streamed.ss", "cpu[0 1]")
    b = run_ss(h, shared, "streamed.ss", "cpu[0 1]", hosts)
    r.check(a.returncode == 0 and b.returncode == 0 and a.stdout == b.stdout,
            "dataset: streamed from a folder every host sees, the local "
            "run's logs bit for bit" + ("" if b.returncode == 0 else
                                        "\n" + b.stderr[-1500:]))
    # In the controller's /tmp: the hosts have their own.
    with tempfile.TemporaryDirectory() as mine:
        write_streamed(mine, 0)
        c = run_ss(h, mine, "streamed.ss", "cpu[0 1]", hosts)
        r.check(c.returncode != 0 and 'the streamed dataset "data" on host '
                f"{h.addrs[0]} is not the controller's: it is not there"
                in c.stderr, "dataset: missing on the hosts, an error naming "
                             "the file and the host\n" + c.stderr[-1500:])
    # Another copy on the second host at the same path: in its mount
    # namespace, another folder bound over the shared one.
    other = tempfile.mkdtemp(dir=h.dir)
    write_streamed(other, 0)
    copy = tempfile.mkdtemp(dir=h.dir)
    write_streamed(copy, 1)
    h.in_host(1, "mount", "--bind", copy, other)
    d = run_ss(h, other, "streamed.ss", "cpu[0 1]", hosts)
    h.in_host(1, "umount", other)
    r.check(d.returncode != 0 and 'the streamed dataset "data" on host '
            f"{h.addrs[1]} is not the controller's: its contents differ"
            in d.stderr, "dataset: another copy on host 2, an error naming "
                         "the file and the host\n" + d.stderr[-1500:])


CASES = {"same_bits": case_same_bits, "deterministic": case_deterministic,
         "kill_worker": case_kill_worker,
         "link_down": case_link_down, "stranger": case_stranger,
         "kill_controller": case_kill_controller, "manual": case_manual,
         "dataset": case_dataset}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ss = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or list(CASES)
    why = skip_reason()
    if why:
        print("SKIP: " + why)
        sys.exit(SKIP)
    r = Report()
    with Hosts(ss) as h:
        for name in names:
            print(f"--- {name}", flush=True)
            try:
                CASES[name](h, r)
            except Exception as e:  # a case that breaks is a failure
                r.check(False, f"{name}: {type(e).__name__}: {e}")
    if r.failures:
        print(f"{len(r.failures)} failed")
        sys.exit(1)
    print("all passed")


if __name__ == "__main__":
    main()
