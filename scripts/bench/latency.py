"""Onset latency, idle cost and memory of Bobao next to speech-dispatcher and the espeak-ng CLI.

Run by scripts/bench-latency.sh:
  latency.py measure FIGURES.json [--no-memory]   on the sound server it provides ($PULSE_SERVER, sink
      $BOBAO_TEST_SINK, server processes $BOBAO_SOUND_SERVER_PIDS) with a release build of bobao
      ($BOBAO); everything is measured in one run on that same null sink. --no-memory leaves out the
      1,000 announcements of the memory figure.
  latency.py report FIGURES.json…                 one column for each server measured
"""
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from monitor import Monitor  # noqa: E402
import proc  # noqa: E402

TEXT = "新客户来了"
RUNS = int(os.environ.get("BENCH_RUNS", "15"))
IDLE_SECONDS = float(os.environ.get("BENCH_IDLE_SECONDS", "60"))
ANNOUNCEMENTS = int(os.environ.get("BENCH_ANNOUNCEMENTS", "1000"))
SINK = os.environ.get("BOBAO_TEST_SINK")
BOBAO = os.environ.get("BOBAO")
# The sound server's processes: PulseAudio's daemon, or pipewire, pipewire-pulse and wireplumber.
SERVER_PIDS = [int(pid) for pid in os.environ.get("BOBAO_SOUND_SERVER_PIDS", "").split()]


def log(message):
    print("bench: " + message, file=sys.stderr, flush=True)


def onset_runs(monitor, trigger, runs=RUNS):
    """Runs `trigger` `runs` times; returns onset latencies in milliseconds."""
    results = []
    for _ in range(runs):
        if not monitor.wait_quiet():
            raise RuntimeError("the sink never went quiet")
        t0 = time.monotonic()
        finish = trigger()
        onset = monitor.first_loud_after(t0)
        if finish:
            finish()
        if onset is None:
            raise RuntimeError("nothing was heard")
        results.append(onset * 1000)
    return results


def server_cpu_seconds():
    return sum(proc.cpu_seconds(p) for p in SERVER_PIDS)


def idle_cpu(pids_of, seconds):
    """Percent of one core used by the processes `pids_of()` names over `seconds`, and by the sound server."""
    before = sum(proc.tree_cpu_seconds(p) for p in pids_of())
    server_before = server_cpu_seconds()
    time.sleep(seconds)
    after = sum(proc.tree_cpu_seconds(p) for p in pids_of())
    server_after = server_cpu_seconds()
    return 100 * (after - before) / seconds, 100 * (server_after - server_before) / seconds


# MARK: Bobao

class Bobao:
    def __init__(self, *arguments):
        self.log = tempfile.NamedTemporaryFile("w+", prefix="bobao-bench-", suffix=".log", delete=False)
        # Its own spool, so a leftover server or the user's own never gets in the way.
        self.state = tempfile.mkdtemp(prefix="bobao-bench-state-")
        self.process = subprocess.Popen(
            [BOBAO, "serve", "--listen", "127.0.0.1:0", "--line-rate", "0", "--idle-timeout", "3600", *arguments],
            stdout=subprocess.PIPE, stderr=self.log, text=True, env=dict(os.environ, XDG_STATE_HOME=self.state))
        line = self.process.stdout.readline()
        self.port = int(line.strip().rsplit(":", 1)[1])
        self.wait_log("keep-alive stream open")
        self.socket = socket.create_connection(("127.0.0.1", self.port))
        self.replies = self.socket.makefile("r", encoding="utf-8")

    def wait_log(self, text, timeout=600):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.log.name, encoding="utf-8") as f:
                if text in f.read():
                    return
            time.sleep(0.05)
        raise RuntimeError("bobao never logged %r" % text)

    def say(self, text):
        self.socket.sendall((text + "\n").encode())
        reply = self.replies.readline().strip()
        if not reply.startswith("OK "):
            raise RuntimeError("bobao refused: " + reply)
        return int(reply.split()[1])

    def stop(self):
        self.socket.close()
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)


# MARK: speech-dispatcher

class SpeechDispatcher:
    PORT = 6561

    def __init__(self):
        self.environment = dict(os.environ, SPEECHD_ADDRESS="inet_socket:127.0.0.1:%d" % self.PORT)
        self.process = subprocess.Popen(
            ["speech-dispatcher", "--run-single", "-c", "inet_socket", "-p", str(self.PORT), "-t", "0"],
            env=self.environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.PORT)).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def trigger(self):
        child = subprocess.Popen(["spd-say", "-l", "zh", TEXT], env=self.environment)
        return child.wait

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def espeak_trigger():
    child = subprocess.Popen(["espeak-ng", "-v", "cmn-latn-pinyin", TEXT])
    return child.wait


# MARK: The run

def summary(values):
    return statistics.median(values), max(values)


def server_name():
    """The server `pactl info` describes: "PulseAudio 16.1", "PipeWire 0.3.65"."""
    info = subprocess.run(["pactl", "info"], capture_output=True, text=True, check=True).stdout
    fields = dict(line.split(": ", 1) for line in info.splitlines() if ": " in line)
    name = fields.get("Server Name", "?")
    match = re.search(r"on PipeWire ([0-9.]+)", name)
    if match:
        return "PipeWire " + match.group(1)
    return ("PulseAudio" if name == "pulseaudio" else name) + " " + fields.get("Server Version", "")


def measure(memory=True):
    figures = {"server": server_name(), "runs": RUNS, "idle_seconds": IDLE_SECONDS}
    if not SERVER_PIDS:
        raise RuntimeError("BOBAO_SOUND_SERVER_PIDS names no sound-server process")

    log("%s alone, idle for %g s" % (figures["server"], IDLE_SECONDS))
    _, server_alone = idle_cpu(lambda: [], IDLE_SECONDS)
    figures["server_alone"] = server_alone

    log("starting bobao")
    bobao = Bobao("--rate", "175")
    time.sleep(1)
    figures["bobao_rss_start"] = proc.rss_mib(bobao.process.pid)
    log("bobao idle for %g s" % IDLE_SECONDS)
    own, server = idle_cpu(lambda: [bobao.process.pid], IDLE_SECONDS)
    figures["bobao_idle"] = (own, server - server_alone)

    monitor = Monitor(SINK)
    log("bobao onset, %d runs" % RUNS)
    figures["bobao_onset"] = onset_runs(monitor, lambda: (bobao.say(TEXT), None)[1])
    monitor.wait_quiet()
    bobao.stop()

    if memory:
        log("bobao: %d short announcements for the memory figure" % ANNOUNCEMENTS)
        bobao = Bobao("--rate", "450", "--gap", "20")
        started = time.monotonic()
        sent = 0
        while sent < ANNOUNCEMENTS:
            batch = min(100, ANNOUNCEMENTS - sent)
            for _ in range(batch):
                last = bobao.say("好")
            sent += batch
            bobao.wait_log("spoke #%d " % last)
        figures["bobao_rss_after"] = proc.rss_mib(bobao.process.pid)
        figures["announcements"] = ANNOUNCEMENTS
        figures["announcement_minutes"] = (time.monotonic() - started) / 60
        bobao.stop()

    log("speech-dispatcher onset, %d runs" % RUNS)
    dispatcher = SpeechDispatcher()
    figures["spd_onset"] = onset_runs(monitor, dispatcher.trigger)
    monitor.wait_quiet()
    monitor.close()
    log("speech-dispatcher idle for %g s" % IDLE_SECONDS)
    own, server = idle_cpu(lambda: [dispatcher.process.pid], IDLE_SECONDS)
    figures["spd_idle"] = (own, server - server_alone)
    figures["spd_rss"] = proc.tree_rss_mib(dispatcher.process.pid)
    dispatcher.stop()

    monitor = Monitor(SINK)
    log("espeak-ng CLI onset, %d runs" % RUNS)
    figures["espeak_onset"] = onset_runs(monitor, espeak_trigger)
    monitor.close()
    return figures


def report(columns):
    """Prints the figures of each server side by side."""
    width = 32
    names = "".join("%*s" % (width, f["server"]) for f in columns)

    print()
    print("Onset latency: text sent -> first sample >= 500 at the null sink's monitor, %s runs each, text %s"
          % ("/".join(str(f["runs"]) for f in columns), TEXT))
    print("  %-34s%s" % ("", names))
    print("  %-34s%s" % ("", ("  %10s %8s %10s" % ("median ms", "max ms", "Bobao/this")) * len(columns)))
    for name, key in (("Bobao (TCP line)", "bobao_onset"),
                      ("spd-say -> speech-dispatcher (TCP)", "spd_onset"),
                      ("espeak-ng -v cmn-latn-pinyin (CLI)", "espeak_onset")):
        cells = ""
        for f in columns:
            median, worst = summary(f[key])
            ratio = "" if key == "bobao_onset" else "%.2f" % (summary(f["bobao_onset"])[0] / median)
            cells += "  %10.1f %8.1f %10s" % (median, worst, ratio)
        print("  %-34s%s" % (name, cells))
    print("  target: Bobao median <= 8 ms and <= 0.5 x spd-say's (on PulseAudio; on PipeWire the graph's")
    print("  quantum sets a floor for every client, so compare only within a column)")
    print()
    print("Idle cost over %s s, %% of one core; +server is the sound server's CPU above its own idle figure"
          % "/".join("%g" % f["idle_seconds"] for f in columns))
    print("  %-34s%s" % ("", names))
    print("  %-34s%s" % ("", ("  %10s %8s %10s" % ("own", "+server", "total")) * len(columns)))
    print("  %-34s%s" % ("the sound server alone", "".join("  %10s %8.2f %10s" % ("", f["server_alone"], "")
                                                         for f in columns)))
    for name, key in (("Bobao (keep-alive playing)", "bobao_idle"), ("speech-dispatcher (idle)", "spd_idle")):
        print("  %-34s%s" % (name, "".join("  %10.2f %8.2f %10.2f" % (f[key][0], f[key][1], sum(f[key]))
                                           for f in columns)))
    print("  target: Bobao total <= 0.5 %")
    print()
    print("Memory (RSS, MiB)")
    print("  %-34s%s" % ("", names))
    print("  %-34s%s" % ("Bobao after start", "".join("%*.1f" % (width, f["bobao_rss_start"]) for f in columns)))
    for f in columns:
        if "bobao_rss_after" in f:
            print("  %-34s%*.1f   (%s; %.1f min of speech at 450 wpm)"
                  % ("Bobao after %d announcements" % f["announcements"], width, f["bobao_rss_after"],
                     f["server"], f["announcement_minutes"]))
    print("  %-34s%s" % ("speech-dispatcher and its modules", "".join("%*.1f" % (width, f["spd_rss"])
                                                                    for f in columns)))
    print("  target: Bobao <= 20 MB")


def main(arguments):
    if arguments[:1] == ["measure"] and len(arguments) in (2, 3):
        figures = measure(memory="--no-memory" not in arguments)
        with open(arguments[1], "w") as f:
            json.dump(figures, f)
    elif arguments[:1] == ["report"] and len(arguments) >= 2:
        columns = []
        for path in arguments[1:]:
            with open(path) as f:
                columns.append(json.load(f))
        report(columns)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
