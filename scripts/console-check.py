#!/usr/bin/python3
"""Drives Bobao's web console in headless Chromium through the DevTools protocol, as a user would.

    scripts/console-check.py URL --screenshot PATH [--phone-screenshot PATH] [--text TEXT] [--token TOKEN]
                             [--timeout SECONDS] [--chromium PROGRAM]

Opens URL, waits for the live connection (/events), types TEXT into the form and taps 播报, waits until
the announcement's row in the list shows its outcome, taps 跳过当前 and sets the volume slider, saves
screenshots (desktop 1280x900, then a phone 412x900) and prints one JSON object:
  {"ok": bool, "errors": [console errors, exceptions, error log entries], "number": N, "state": "done",
   "row": {"text", "badge", "onset"}, "connection": "...", "skip": reply, "volume": "reply | slider label",
   "screenshots": [...], "failure": null|"..."}
Exit status 0 when ok (no errors and the row reached "done"), 1 when not, 2 when Chromium could not be run.
Uses Debian's python3-websockets (the system python3, hence the shebang); `chromium` from PATH.
"""
import argparse
import asyncio
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import websockets

DESKTOP = (1280, 900)
PHONE = (412, 900)


class Browser:
    """A headless Chromium with its own profile folder, and one DevTools session on a new page."""

    def __init__(self, program):
        self.profile = tempfile.mkdtemp(prefix="bobao-chromium-")
        self.log = []
        announced = []
        ready = threading.Event()
        self.process = subprocess.Popen(
            [program, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
             "--user-data-dir=" + self.profile, "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--mute-audio", "--hide-scrollbars",
             "--window-size=%d,%d" % DESKTOP, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")

        def read_stderr():
            for line in self.process.stderr:
                self.log.append(line.rstrip())
                del self.log[:-40]
                if line.startswith("DevTools listening on ws://"):
                    announced.append(line.split(" on ", 1)[1].strip())
                    ready.set()
            ready.set()  # exited
        threading.Thread(target=read_stderr, daemon=True).start()
        if not ready.wait(30) or not announced:
            self.close()  # a browser that never listened must not outlive this script
            raise RuntimeError("chromium did not start: " + " | ".join(self.log[-10:]))
        # The port it chose (port 0) and the browser's endpoint: the line it prints once listening, which
        # it writes to DevToolsActivePort in the profile folder only a moment later.
        self.endpoint = announced[0]
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        lines = []
        if os.path.exists(port_file):
            with open(port_file) as file:
                lines = file.read().split("\n")
        if len(lines) >= 2 and lines[0].strip().isdigit() and lines[1].startswith("/"):  # not half written
            self.endpoint = "ws://127.0.0.1:%s%s" % (lines[0].strip(), lines[1].strip())
        self.pending = {}
        self.listeners = []
        self.next_id = 0
        self.session = None

    async def connect(self):
        self.socket = await websockets.connect(self.endpoint, max_size=None, ping_interval=None, close_timeout=2)
        self.reader = asyncio.ensure_future(self.read())
        target = await self.send("Target.createTarget", {"url": "about:blank"}, browser=True)
        attached = await self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, browser=True)
        self.session = attached["sessionId"]

    async def read(self):
        async for raw in self.socket:
            message = json.loads(raw)
            if "id" in message:
                future = self.pending.pop(message["id"], None)
                if future and not future.done():
                    if "error" in message:
                        future.set_exception(RuntimeError("%s" % message["error"]))
                    else:
                        future.set_result(message.get("result", {}))
            else:
                for listener in list(self.listeners):
                    listener(message.get("method"), message.get("params", {}))

    async def send(self, method, params=None, browser=False):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if not browser:
            message["sessionId"] = self.session
        future = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        await self.socket.send(json.dumps(message))
        return await asyncio.wait_for(future, 30)

    async def evaluate(self, expression):
        reply = await self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise RuntimeError("evaluate %r: %s" % (expression[:60], reply["exceptionDetails"].get("text")))
        return reply["result"].get("value")

    async def wait_for(self, expression, timeout, what):
        """Polls a DOM condition until it is truthy (its value is returned) or the deadline passes."""
        deadline = time.monotonic() + timeout
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError("timed out after %g s waiting for %s" % (timeout, what))
            await asyncio.sleep(0.1)

    async def click(self, selector):
        box = await self.evaluate(
            "(() => { const e = document.querySelector(%s); e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()" % json.dumps(selector))
        for kind in ("mousePressed", "mouseReleased"):
            await self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})

    async def viewport(self, size, mobile):
        await self.send("Emulation.setDeviceMetricsOverride",
                        {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": mobile})
        await self.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")

    async def screenshot(self, path):
        """The whole page, not only the viewport."""
        await self.evaluate("window.scrollTo(0, 0)")  # else the sticky header shows where the page was scrolled to
        size = (await self.send("Page.getLayoutMetrics"))["cssContentSize"]
        shot = await self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": {
            "x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "wb") as file:
            file.write(base64.b64decode(shot["data"]))

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def watch_errors(method, params, errors):
    """Console errors, uncaught exceptions and error log entries (failed requests among them)."""
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        errors.append("console.%s: %s" % (params["type"], " ".join(
            str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", []))))
    elif method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        errors.append("exception: %s %s" % (details.get("text", ""), details.get("exception", {}).get("description", "")))
    elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        entry = params["entry"]
        errors.append("log (%s): %s %s" % (entry.get("source"), entry.get("text"), entry.get("url", "")))


async def check(browser, options, summary):
    errors = summary["errors"]
    loaded = asyncio.Event()
    browser.listeners.append(lambda method, params: watch_errors(method, params, errors))
    browser.listeners.append(lambda method, params: method == "Page.loadEventFired" and loaded.set())
    await browser.connect()
    for domain in ("Runtime", "Log", "Page"):
        await browser.send(domain + ".enable")
    if options.token:
        # In place of typing it into the field: the page's first requests already carry it.
        await browser.send("Page.addScriptToEvaluateOnNewDocument",
                           {"source": "localStorage.setItem('bobao.token', %s)" % json.dumps(options.token)})
    await browser.viewport(DESKTOP, mobile=False)
    await browser.send("Page.navigate", {"url": options.url})
    await asyncio.wait_for(loaded.wait(), options.timeout)

    summary["connection"] = await browser.wait_for(
        "document.querySelector('#conn.on') && document.querySelector('#conn').textContent", options.timeout,
        "the live connection (#conn.on)")
    await browser.wait_for("document.querySelector('#sound-state').textContent !== '–'", options.timeout, "the status")
    summary["sound"] = await browser.evaluate("document.querySelector('#sound-state').textContent")

    # Type the sentence as a user would (IME-like text insertion) and tap the button.
    await browser.click("#text")
    await browser.send("Input.insertText", {"text": options.text})
    await browser.click("#send-button")
    message = await browser.wait_for(
        "(() => { const m = document.querySelector('#send-msg'); return m.textContent && m.className + '|' + m.textContent; })()",
        options.timeout, "the reply to the form")
    summary["reply"] = message.split("|", 1)[1]
    if not message.startswith("msg ok") or "#" not in message:
        raise RuntimeError("the form was refused: " + summary["reply"])
    number = int(message.rsplit("#", 1)[1].split("）")[0].strip())
    summary["number"] = number

    # The row reaches an outcome only through /events: nothing else refreshes the list.
    row = "document.querySelector('#list li[data-number=\"%d\"]')" % number
    outcome = "['done','cut','expired','cancelled','failed'].includes(%s.dataset.state)" % row
    summary["state"] = await browser.wait_for(
        "(() => { const r = %s; return r && %s && r.dataset.state; })()" % (row, outcome), options.timeout,
        "announcement #%d to end" % number)
    summary["row"] = await browser.evaluate(
        "(() => { const r = %s; const q = (s) => { const e = r.querySelector(s); return e ? e.textContent : null; };"
        " return {text: q('.text'), badge: q('.badge'), onset: q('.onset'), elements: r.querySelectorAll('*').length}; })()" % row)
    summary["speaking_after"] = await browser.evaluate("document.querySelector('#speaking').textContent")

    # The controls, with nothing left to speak: skip (its reply), and the volume slider set to 100 (the
    # level a stream starts at, so the sound server remembers nothing new), which the next status event shows.
    await browser.click("#skip")
    summary["skip"] = await browser.wait_for("document.querySelector('#ctl-msg').textContent", options.timeout, "skip's reply")
    # No input event, so only a status event can turn the label from 系统默认 to 100%.
    await browser.evaluate("(() => { const v = document.querySelector('#volume'); v.value = 100;"
                           " v.dispatchEvent(new Event('change')); })()")
    summary["volume"] = await browser.wait_for(
        "(() => { const m = document.querySelector('#vol-msg').textContent, l = document.querySelector('#volume-out');"
        " return m && l.textContent === '100%' && m + ' | ' + l.textContent; })()", options.timeout,
        "the volume's reply and the status event after it")

    await browser.screenshot(options.screenshot)
    summary["screenshots"].append(options.screenshot)
    if options.phone_screenshot:
        await browser.viewport(PHONE, mobile=True)
        summary["phone_overflow"] = await browser.evaluate(
            "document.documentElement.scrollWidth > document.documentElement.clientWidth")
        await browser.screenshot(options.phone_screenshot)
        summary["screenshots"].append(options.phone_screenshot)


async def check_and_show(browser, options, summary):
    """`check`; when it fails, a screenshot of how the page looked then."""
    try:
        await check(browser, options, summary)
    except Exception:
        if browser.session and not summary["screenshots"]:
            try:
                await browser.screenshot(options.screenshot)
                summary["screenshots"].append(options.screenshot)
            except Exception:  # noqa: BLE001 - the first failure is the one to report
                pass
        raise
    finally:
        if getattr(browser, "socket", None):
            await browser.socket.close()  # else asyncio.run's clean-up waits out the socket's close timeout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("--screenshot", required=True)
    parser.add_argument("--phone-screenshot")
    parser.add_argument("--text", default="请 A12 号顾客到三号窗口办理业务")
    parser.add_argument("--token")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "chromium"))
    options = parser.parse_args()
    summary = {"ok": False, "url": options.url, "errors": [], "number": None, "state": None, "row": None,
               "connection": None, "screenshots": [], "failure": None}
    program = shutil.which(options.chromium)
    if not program:
        summary["failure"] = "no %s on PATH (Debian: apt-get install chromium)" % options.chromium
        print(json.dumps(summary, ensure_ascii=False))
        return 2
    # A SIGTERM (a test's time limit) unwinds through the `finally` below, so Chromium is stopped too.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    try:
        browser = Browser(program)
    except Exception as error:  # noqa: BLE001 - reported in the summary
        summary["failure"] = str(error)
        print(json.dumps(summary, ensure_ascii=False))
        return 2
    try:
        asyncio.run(asyncio.wait_for(check_and_show(browser, options, summary), options.timeout * 3))
    except Exception as error:  # noqa: BLE001 - reported in the summary
        summary["failure"] = "%s: %s" % (type(error).__name__, error)
    finally:
        browser.close()
    summary["ok"] = summary["failure"] is None and not summary["errors"] and summary["state"] == "done"
    print(json.dumps(summary, ensure_ascii=False))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
