"""The HTTP port next to the line port: onset latency of `POST /announce`, and requests per second.

Run by scripts/bench-http.sh:
  http_port.py onset FIGURES.json        on the sound server it provides ($PULSE_SERVER, sink $BOBAO_TEST_SINK)
      with a release build of bobao ($BOBAO), one server with both ports: BENCH_RUNS rounds (default 20),
      each a line on the line port's connection, a POST on a kept-alive HTTP connection and a POST on a new
      connection, in turn. Onset is measured as scripts/bench/latency.py does; each announcement is skipped
      once heard, so that a round takes about a second. One round before them is not counted.
  http_port.py throughput FIGURES.json   no sound server, as scripts/bench-acks.sh: with --no-spool, then with a
      spool in a temporary file, BENCH_HTTP_CONNECTIONS (32) clients send BENCH_HTTP_EACH (500) requests
      each, BENCH_HTTP_ROUNDS (3) times: `hey` POSTs on kept-alive connections (request, answer, request…),
      then scripts/bench/acks.py with as many line clients and lines (each client sends all its lines at
      once), then as many line clients that, like HTTP/1.1 clients, wait for each answer before sending the
      next line. POST /clear after each; bobao's CPU time is read from /proc around each.
  http_port.py report FIGURES.json…      the onset figures of each sound server side by side, then throughput
"""
import http.client
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from latency import Bobao, TEXT, log, onset_runs, server_name, summary  # noqa: E402
from monitor import Monitor  # noqa: E402
import proc  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "20"))
CONNECTIONS = int(os.environ.get("BENCH_HTTP_CONNECTIONS", "32"))
EACH = int(os.environ.get("BENCH_HTTP_EACH", "500"))
ROUNDS = int(os.environ.get("BENCH_HTTP_ROUNDS", "3"))
BOBAO = os.environ.get("BOBAO")
HERE = os.path.dirname(os.path.abspath(__file__))
PLAIN = {"Content-Type": "text/plain; charset=utf-8"}


def post(connection, path, body=b"", headers=PLAIN):
    """Sends a POST on `connection` and returns (status, body)."""
    connection.request("POST", path, body=body, headers=headers)
    response = connection.getresponse()
    return response.status, response.read().decode()


def announce(connection):
    status, body = post(connection, "/announce", TEXT.encode())
    if status != 202:
        raise RuntimeError("POST /announce answered %d %s" % (status, body.strip()))


# MARK: Onset

class HTTPBobao(Bobao):
    """latency.py's Bobao (line port, spool in a temporary folder), with the HTTP port too."""

    def __init__(self, *arguments):
        super().__init__("--http", "127.0.0.1:0", *arguments)
        line = self.process.stdout.readline()  # "http on HOST:PORT", printed after "listening on"
        if not line.startswith("http on "):
            raise RuntimeError("bobao printed %r, not the HTTP port" % line)
        self.http_port = int(line.strip().rsplit(":", 1)[1])
        self.http = http.client.HTTPConnection("127.0.0.1", self.http_port)
        self.control = http.client.HTTPConnection("127.0.0.1", self.http_port)

    def new_connection(self):
        return http.client.HTTPConnection("127.0.0.1", self.http_port)

    def skip(self):
        status, body = post(self.control, "/skip")
        if status != 200:
            raise RuntimeError("POST /skip answered %d %s" % (status, body.strip()))

    def stop(self):
        self.http.close()
        self.control.close()
        super().stop()


def measure_onset():
    figures = {"server": server_name(), "runs": RUNS}
    log("starting bobao with the HTTP port")
    bobao = HTTPBobao("--rate", "175")
    bobao.http.connect()
    bobao.control.connect()
    monitor = Monitor(os.environ["BOBAO_TEST_SINK"])

    replies = {}

    def timed(name, send):
        """A trigger for onset_runs: `send` (which returns once the reply was read), timed into replies."""
        def trigger():
            started = time.monotonic()
            send()
            replies[name] = (time.monotonic() - started) * 1000
            return bobao.skip
        return trigger

    def new_connection():
        connection = bobao.new_connection()
        announce(connection)
        connection.close()

    triggers = {"line": timed("line", lambda: bobao.say(TEXT)),
                "kept_alive": timed("kept_alive", lambda: announce(bobao.http)),
                "new_connection": timed("new_connection", new_connection)}
    onsets = {name: [] for name in triggers}
    for name in triggers:
        figures[name + "_reply"] = []
    log("onset: %d rounds of a line, a POST on a kept-alive connection and a POST on a new one" % RUNS)
    for round in range(RUNS + 1):
        for name, trigger in triggers.items():
            onset = onset_runs(monitor, trigger, runs=1)
            if round > 0:
                onsets[name] += onset
                figures[name + "_reply"].append(replies[name])
    monitor.wait_quiet()
    monitor.close()
    bobao.stop()
    figures.update(onsets)
    return figures


# MARK: Throughput

class Server:
    """`bobao serve` with both ports and no sound server, as scripts/bench-acks.sh runs it."""

    def __init__(self, *arguments):
        self.folder = tempfile.mkdtemp(prefix="bobao-bench-http-")
        self.log = open(os.path.join(self.folder, "server.log"), "w+")
        environment = dict(os.environ, PULSE_SERVER="unix:/nonexistent", XDG_STATE_HOME=self.folder)
        self.process = subprocess.Popen(
            [BOBAO, "serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--queue", "100000",
             "--ttl", "3600", "--line-rate", "0", "--idle-timeout", "3600", *arguments],
            stdout=subprocess.PIPE, stderr=self.log, text=True, env=environment)
        self.port = int(self.process.stdout.readline().strip().rsplit(":", 1)[1])
        self.http_port = int(self.process.stdout.readline().strip().rsplit(":", 1)[1])

    def clear(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.http_port)
        status, body = post(connection, "/clear")
        connection.close()
        if status != 200:
            raise RuntimeError("POST /clear answered %d %s" % (status, body.strip()))

    def stop(self):
        self.process.send_signal(signal.SIGKILL)  # as bench-acks.sh: the spool is thrown away anyway
        self.process.wait()
        self.log.close()
        subprocess.run(["rm", "-rf", self.folder], check=True)


def hey(server, body_file):
    """One round of `hey`: requests per second, responses by status, and its errors (text → count)."""
    total = CONNECTIONS * EACH
    output = subprocess.run(
        ["hey", "-n", str(total), "-c", str(CONNECTIONS), "-m", "POST", "-T", PLAIN["Content-Type"],
         "-D", body_file, "http://127.0.0.1:%d/announce" % server.http_port],
        capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s*([0-9.]+)", output).group(1))
    statuses, errors, section = {}, {}, None
    for text in output.splitlines():
        if text.startswith("Status code distribution"):
            section = statuses
        elif text.startswith("Error distribution"):
            section = errors
        elif section is not None and re.match(r"\s+\[", text):
            match = re.match(r"\s+\[(\d+)\]\s+(\d+) responses", text) if section is statuses \
                else re.match(r"\s+\[(\d+)\]\s+(.*)", text)
            if section is statuses:
                statuses[match.group(1)] = int(match.group(2))
            else:
                errors[match.group(2)] = int(match.group(1))
    answered = sum(statuses.values())
    if answered + sum(errors.values()) < total:
        errors["no answer"] = total - answered - sum(errors.values())
    return {"rate": rate, "statuses": statuses, "errors": errors}


def acks(server):
    """One round of scripts/bench/acks.py on the line port: acks per second, OK and ERR counts."""
    environment = dict(os.environ, BOBAO_PORT=str(server.port), BULK_CLIENTS=str(CONNECTIONS),
                       BULK_LINES=str(EACH))
    output = subprocess.run([sys.executable, os.path.join(HERE, "acks.py")], env=environment,
                            capture_output=True, text=True, check=True).stdout
    match = re.search(r"(\d+) OK, (\d+) ERR in [0-9.]+ s = (\d+) acks/s; .*median ([0-9.]+) ms, worst ([0-9.]+)",
                      output)
    ok, err, rate, median, worst = match.groups()
    return {"rate": float(rate), "ok": int(ok), "err": int(err), "probe": (float(median), float(worst))}


def lockstep(server):
    """One round of line clients that, like HTTP/1.1 clients, send a line only once the last was answered:
    CONNECTIONS threads, EACH lines each. Returns acks per second, OK and other replies."""
    counts, lock = {"ok": 0, "err": 0}, threading.Lock()

    def client():
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        replies, line, ok = sock.makefile("rb"), (TEXT + "\n").encode(), 0
        for _ in range(EACH):
            sock.sendall(line)
            ok += replies.readline().startswith(b"OK ")
        sock.close()
        with lock:
            counts["ok"] += ok
            counts["err"] += EACH - ok

    threads = [threading.Thread(target=client) for _ in range(CONNECTIONS)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"rate": counts["ok"] / (time.monotonic() - started), **counts}


def measure_throughput():
    figures = {"connections": CONNECTIONS, "each": EACH, "rounds": ROUNDS, "modes": []}
    body = tempfile.NamedTemporaryFile("wb", prefix="bobao-bench-body-", delete=False)
    body.write(TEXT.encode())
    body.close()
    for label, spool in (("--no-spool", False), ("spool (temp file)", True)):
        # The spool is a file in the server's own temporary folder, with the default (durable) settings.
        server = Server() if spool else Server("--no-spool")
        mode = {"label": label, "http": [], "line": [], "lockstep": []}
        for round in range(ROUNDS):
            log("%s, round %d: %d POSTs on %d connections, then as many lines"
                % (label, round + 1, CONNECTIONS * EACH, CONNECTIONS))
            for key, run in (("http", lambda: hey(server, body.name)), ("line", lambda: acks(server)),
                             ("lockstep", lambda: lockstep(server))):
                cpu = proc.cpu_seconds(server.process.pid)
                figures_of_run = run()
                figures_of_run["cpu"] = proc.cpu_seconds(server.process.pid) - cpu
                mode[key].append(figures_of_run)
                server.clear()
        server.stop()
        figures["modes"].append(mode)
    os.unlink(body.name)
    return figures


# MARK: Report

def report_onset(columns):
    width = 38
    print()
    print("POST /announce vs the line port, one server: text sent -> first sample >= 500 at the null sink's")
    print("monitor, %s rounds of one of each in turn, text %s; reply: until the 202 or OK was read"
          % ("/".join(str(f["runs"]) for f in columns), TEXT))
    print("  %-32s%s" % ("", "".join("%*s" % (width, f["server"]) for f in columns)))
    print("  %-32s%s" % ("", ("  %9s %7s %8s %9s" % ("median ms", "max ms", "vs line", "reply ms")) * len(columns)))
    for name, key in (("line port (one TCP connection)", "line"),
                      ("POST /announce (kept-alive)", "kept_alive"),
                      ("POST /announce (new connection)", "new_connection")):
        cells = ""
        for f in columns:
            median, worst = summary(f[key])
            difference = "" if key == "line" else "%+.1f" % (median - summary(f["line"])[0])
            cells += "  %9.1f %7.1f %8s %9.1f" % (median, worst, difference, statistics.median(f[key + "_reply"]))
        print("  %-32s%s" % (name, cells))


def report_throughput(f):
    total = f["connections"] * f["each"]
    modes = f["modes"]
    width = 30
    print()
    print("Requests per second, no sound server (as bench-acks.sh): %d connections x %d = %d requests a run,"
          % (f["connections"], f["each"], total))
    print("%d runs, median (slowest-fastest run); POST /clear after each run" % f["rounds"])
    print("  %-40s%s" % ("", "".join("%*s" % (width, m["label"]) for m in modes)))
    rows = (("POST /announce, kept-alive (hey)", "http"),
            ("line port, one line in flight", "lockstep"),
            ("line port, pipelined (acks.py)", "line"))
    for name, key in rows:
        cells = ""
        for m in modes:
            rates = [r["rate"] for r in m[key]]
            cells += "%*s" % (width, "%s (%s-%s)" % tuple("{:,.0f}".format(x)
                                                         for x in (statistics.median(rates), min(rates), max(rates))))
        print("  %-40s%s" % (name, cells))
    print("  bobao's CPU per request, us (median run)")
    for name, key in rows:
        print("    %-38s%s" % (name, "".join("%*.1f" % (width, statistics.median(r["cpu"] for r in m[key]) / total * 1e6)
                                           for m in modes)))
    print("  errors (not 202 / not OK, of %d)" % (total * f["rounds"]))
    for name, key in rows:
        cells = ""
        for m in modes:
            if key == "http":
                bad = {}
                for r in m["http"]:
                    for status, count in r["statuses"].items():
                        if status != "202":
                            bad["HTTP " + status] = bad.get("HTTP " + status, 0) + count
                    for error, count in r["errors"].items():
                        bad[error] = bad.get(error, 0) + count
                cells += "%*d" % (width, sum(bad.values()))
                details = ", ".join("%s: %d" % item for item in sorted(bad.items()))
                if details:
                    cells += " (%s)" % details
            else:
                cells += "%*d" % (width, sum(total - r["ok"] for r in m[key]))
        print("    %-38s%s" % (name, cells))
    print("  %-40s%s" % ("acks.py's probe, median / worst ms", "".join(
        "%*s" % (width, "%.1f / %.1f" % (statistics.median(r["probe"][0] for r in m["line"]),
                                         max(r["probe"][1] for r in m["line"]))) for m in modes)))


def main(arguments):
    if arguments[:1] == ["onset"] and len(arguments) == 2:
        figures = measure_onset()
    elif arguments[:1] == ["throughput"] and len(arguments) == 2:
        figures = measure_throughput()
    elif arguments[:1] == ["report"] and len(arguments) >= 2:
        columns = []
        for path in arguments[1:]:
            with open(path) as f:
                columns.append(json.load(f))
        onset = [c for c in columns if "line" in c]
        if onset:
            report_onset(onset)
        for c in columns:
            if "modes" in c:
                report_throughput(c)
        return
    else:
        sys.exit(__doc__)
    with open(arguments[1], "w") as f:
        json.dump(figures, f)


if __name__ == "__main__":
    main(sys.argv[1:])
