"""Onset latency, idle cost and memory of Bobao next to speech-dispatcher and the espeak-ng CLI.

Run by scripts/bench-latency.sh, which provides a private PulseAudio ($PULSE_SERVER, sink
$BOBAO_TEST_SINK) and a release build of bobao ($BOBAO). Everything is measured in one run on that
same null sink.
"""
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
SINK = os.environ["BOBAO_TEST_SINK"]
BOBAO = os.environ["BOBAO"]
PULSE_PID = int(os.environ["BOBAO_PULSE_PID"])


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


def idle_cpu(pids_of, seconds):
    """Percent of one core used by the processes `pids_of()` names over `seconds`, and by PulseAudio."""
    before = sum(proc.tree_cpu_seconds(p) for p in pids_of())
    pulse_before = proc.cpu_seconds(PULSE_PID)
    time.sleep(seconds)
    after = sum(proc.tree_cpu_seconds(p) for p in pids_of())
    pulse_after = proc.cpu_seconds(PULSE_PID)
    return 100 * (after - before) / seconds, 100 * (pulse_after - pulse_before) / seconds


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


def main():
    figures = {}

    log("PulseAudio alone, idle for %g s" % IDLE_SECONDS)
    _, pulse_alone = idle_cpu(lambda: [], IDLE_SECONDS)
    figures["pulse_alone"] = pulse_alone

    log("starting bobao")
    bobao = Bobao("--rate", "175")
    time.sleep(1)
    figures["bobao_rss_start"] = proc.rss_mib(bobao.process.pid)
    log("bobao idle for %g s" % IDLE_SECONDS)
    own, pulse = idle_cpu(lambda: [bobao.process.pid], IDLE_SECONDS)
    figures["bobao_idle"] = (own, pulse - pulse_alone)

    monitor = Monitor(SINK)
    log("bobao onset, %d runs" % RUNS)
    figures["bobao_onset"] = onset_runs(monitor, lambda: (bobao.say(TEXT), None)[1])
    monitor.wait_quiet()

    log("bobao: %d short announcements for the memory figure" % ANNOUNCEMENTS)
    bobao.stop()
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
    figures["announcement_minutes"] = (time.monotonic() - started) / 60
    bobao.stop()

    log("speech-dispatcher onset, %d runs" % RUNS)
    dispatcher = SpeechDispatcher()
    figures["spd_onset"] = onset_runs(monitor, dispatcher.trigger)
    monitor.wait_quiet()
    monitor.close()
    log("speech-dispatcher idle for %g s" % IDLE_SECONDS)
    own, pulse = idle_cpu(lambda: [dispatcher.process.pid], IDLE_SECONDS)
    figures["spd_idle"] = (own, pulse - pulse_alone)
    figures["spd_rss"] = proc.tree_rss_mib(dispatcher.process.pid)
    dispatcher.stop()

    monitor = Monitor(SINK)
    log("espeak-ng CLI onset, %d runs" % RUNS)
    figures["espeak_onset"] = onset_runs(monitor, espeak_trigger)
    monitor.close()

    report(figures)


def report(f):
    b_med, b_max = summary(f["bobao_onset"])
    s_med, s_max = summary(f["spd_onset"])
    e_med, e_max = summary(f["espeak_onset"])
    print()
    print("Onset latency: text sent -> first sample >= 500 at the null sink's monitor, %d runs each, text %s"
          % (RUNS, TEXT))
    print("  %-34s %10s %10s %16s" % ("", "median ms", "max ms", "Bobao / this"))
    print("  %-34s %10.1f %10.1f %16s" % ("Bobao (TCP line)", b_med, b_max, ""))
    print("  %-34s %10.1f %10.1f %16.2f" % ("spd-say -> speech-dispatcher (TCP)", s_med, s_max, b_med / s_med))
    print("  %-34s %10.1f %10.1f %16.2f" % ("espeak-ng -v cmn-latn-pinyin (CLI)", e_med, e_max, b_med / e_med))
    print("  target: Bobao median <= 8 ms and <= 0.5 x spd-say's")
    print()
    print("Idle cost over %g s, %% of one core (PulseAudio alone: %.2f %%)" % (IDLE_SECONDS, f["pulse_alone"]))
    print("  %-34s %10s %14s %10s" % ("", "own", "+PulseAudio", "total"))
    for name, key in (("Bobao (keep-alive playing)", "bobao_idle"), ("speech-dispatcher (idle)", "spd_idle")):
        own, extra = f[key]
        print("  %-34s %10.2f %14.2f %10.2f" % (name, own, extra, own + extra))
    print("  target: Bobao total <= 0.5 %")
    print()
    print("Memory (RSS, MiB)")
    print("  Bobao after start                  %8.1f" % f["bobao_rss_start"])
    print("  Bobao after %d announcements     %8.1f   (%.1f min of speech at 450 wpm)"
          % (ANNOUNCEMENTS, f["bobao_rss_after"], f["announcement_minutes"]))
    print("  speech-dispatcher and its modules  %8.1f" % f["spd_rss"])
    print("  target: Bobao <= 20 MB")


if __name__ == "__main__":
    main()
