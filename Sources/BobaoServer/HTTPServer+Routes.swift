import BobaoAudio
import BobaoCore
import BobaoPlatform
import Glibc
import Synchronization

/// The routes: which exist, who may use them, and what each answers.
extension HTTPServer {
    enum RouteResult {
        case now(HTTPResponse)
        /// Answered later through `HTTPExchange.deliver`.
        case later
        case stream(HTTPEventStream)
    }

    /// Every route and the methods it takes (HEAD wherever GET).
    static let routes: [String: [String]] = [
        "/": ["GET"], "/announce": ["POST", "GET"], "/status": ["GET"], "/announcements": ["GET"],
        "/cancel": ["POST"], "/skip": ["POST"], "/clear": ["POST"], "/volume": ["GET", "PUT", "POST"],
        "/events": ["GET"], "/metrics": ["GET"], "/healthz": ["GET"],
    ]

    /// Routes whose GET changes something.
    static let changingGETs: Set<String> = ["/announce"]

    /// Routes anyone the address rules admit may use without the token: the console's page (it holds no data,
    /// and asks for the token) and the health check.
    static let open: Set<String> = ["/", "/healthz"]

    /// What can be refused once the headers are in, before the body is read.
    func check(_ exchange: HTTPExchange) -> HTTPResponse? {
        guard settings.access.admits(exchange.host) else { return refuse(exchange, HTTPFailure(.forbidden)) }
        guard let methods = Self.routes[exchange.path] else {
            let known = Self.routes.keys.sorted().joined(separator: ", ")
            return refuse(exchange, HTTPFailure(status: 404, code: "no-such-route",
                message: "no route \(JSONText.quote(exchange.path)) (routes: \(known))"))
        }
        // HEAD is GET without the body, where a GET changes nothing (not `GET /announce?text=`).
        let headAllowed = methods.contains("GET") && !Self.changingGETs.contains(exchange.path)
        let method = exchange.method == "HEAD" && headAllowed ? "GET" : exchange.method
        guard methods.contains(method) else {
            let allowed = headAllowed ? methods + ["HEAD"] : methods
            return refuse(exchange, HTTPFailure(status: 405, code: "method-not-allowed",
                message: "\(exchange.path) takes \(allowed.joined(separator: " or ")), not \(JSONText.quote(exchange.method))"),
                headers: [("Allow", allowed.joined(separator: ", "))])
        }
        if checksHost, let refusal = HTTPAccess.hostProblem(
            exchange.header("Host"), ownNames: Self.ownNames, isAddress: { AddressRange.addressBytes($0) != nil }) {
            return refuse(exchange, HTTPFailure(refusal))
        }
        // A link to the console from another page opens it (the page holds no data; what it then asks for is
        // same-origin).
        let navigation = exchange.path == "/" && exchange.header("Sec-Fetch-Mode") == "navigate"
        if !navigation, let refusal = HTTPAccess.crossSiteProblem(
            secFetchSite: exchange.header("Sec-Fetch-Site"), origin: exchange.header("Origin"), host: exchange.header("Host")) {
            return refuse(exchange, HTTPFailure(refusal))
        }
        if settings.access.token != nil && !Self.open.contains(exchange.path) {
            guard let presented = HTTPAccess.presentedToken(exchange.header("Authorization")) else {
                return refuse(exchange, HTTPFailure(status: 401, code: "auth-required",
                    message: "this server needs its token: send Authorization: Bearer TOKEN"), headers: Self.challenge)
            }
            guard settings.access.tokenMatches(presented) else {
                return refuse(exchange, HTTPFailure(.authFailed), headers: Self.challenge)
            }
        }
        if let length = exchange.header("Content-Length").flatMap({ Int($0) }), length > settings.maximumBodyBytes {
            return refuse(exchange, .tooLarge(limit: settings.maximumBodyBytes))
        }
        return nil
    }

    /// This machine's name, which a request may be addressed to without a token.
    static let ownNames: [String] = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return [] }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? [] : [name, name + ".local"]
    }()

    static let challenge = [("WWW-Authenticate", "Bearer realm=\"bobao\"")]

    /// The refusal's response, counted and logged like the line port's (the first of each code from an
    /// address, then summaries).
    func refuse(_ exchange: HTTPExchange, _ failure: HTTPFailure, headers: [(String, String)] = []) -> HTTPResponse {
        noteRefusal(code: failure.code, host: exchange.host) {
            "refused an HTTP request from \(exchange.peer) (\(exchange.method) \(exchange.path)): \(failure.code) (\(failure.message))"
        }
        return .failure(failure, headers: headers)
    }

    /// Whether the peer is within its rate (as a line would be).
    private func withinRate(_ exchange: HTTPExchange) -> Bool {
        ledger.withLock { $0.allowLine(from: exchange.host, isLoopback: exchange.isLoopback, now: WallClock.monotonicSeconds()) }
    }

    /// Once the whole body is in.
    func route(_ exchange: HTTPExchange) -> RouteResult {
        let (body, tooLarge) = exchange.state.withLock { ($0.body, $0.bodyTooLarge) }
        if tooLarge { return .now(refuse(exchange, .tooLarge(limit: settings.maximumBodyBytes))) }
        let contentType = exchange.header("Content-Type")
        guard let query = exchange.query else {
            return .now(refuse(exchange, HTTPFailure(status: 400, code: "bad-encoding",
                message: "the URL's query is not UTF-8 once percent-decoded (encode text as UTF-8, then percent-encode it)")))
        }
        // A query is held to the body's limit: `?text=` is not a way around --max-line.
        let queryBytes = query.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 }
        if queryBytes > settings.maximumBodyBytes {
            return .now(refuse(exchange, HTTPFailure(status: 414, code: "too-long",
                message: "the URL's query is longer than \(settings.maximumBodyBytes) bytes (--max-line) once decoded, "
                    + "counting names and separators; "
                    + "send the text as the body")))
        }
        switch exchange.path {
        case "/":
            return .now(HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(ConsolePage.html.utf8),
                                     headers: Self.pageHeaders))
        case "/healthz":
            return .now(health())
        case "/metrics":
            return .now(HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8",
                                     body: Array(services.metrics().utf8)))
        case "/announcements":
            return .now(.json(200, services.announcements()))
        case "/events":
            return openStream(exchange)
        case "/announce":
            let submission: Submission
            switch HTTPAnnouncement.read(
                contentType: contentType, body: body, query: query, rules: settings.messageRules,
                defaultCharset: settings.encoding.name) {
            case .failure(let failure): return .now(refuse(exchange, failure))
            case .success(let read): submission = read
            }
            guard withinRate(exchange) else { return .now(rateLimited(exchange)) }
            announce(submission, exchange)
            return .later
        default:
            let name = exchange.path == "/volume" && exchange.method != "GET" && exchange.method != "HEAD" ? "volume"
                : String(exchange.path.dropFirst())
            let command: ClientCommand
            switch HTTPAnnouncement.command(
                name, contentType: contentType, body: body, query: query, defaultCharset: settings.encoding.name) {
            case .failure(let failure): return .now(refuse(exchange, failure))
            case .success(let read): command = read
            }
            if case .volume(nil) = command, exchange.method != "GET" && exchange.method != "HEAD" {
                return .now(refuse(exchange, HTTPFailure(.badField("value", "missing: send {\"value\": 70}, 70 or ?value=70"))))
            }
            guard withinRate(exchange) else { return .now(rateLimited(exchange)) }
            services.perform(command, exchange.peer) { [weak exchange] text in exchange?.deliver(Self.commandResponse(text)) }
            return .later
        }
    }

    private func rateLimited(_ exchange: HTTPExchange) -> HTTPResponse {
        let perSecond = ledger.withLock { $0.rateLimiter.perSecond }
        return refuse(exchange, HTTPFailure(.rateLimited(perSecond: perSecond)))
    }

    /// The console may run only its own inline script and talk only to this server.
    static let pageHeaders = [
        ("Content-Security-Policy",
         "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; "
            + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
        ("Referrer-Policy", "no-referrer"),
    ]

    private func health() -> HTTPResponse {
        let sound = services.sound()
        let connected = ["playing", "idle", "corked"].contains(sound.state)
        var body = "{\"ok\":\(connected),\"sound\":\(JSONText.quote(sound.state)),\"sink\":"
        body += (sound.sink.map(JSONText.quote) ?? "null") + ",\"reason\":"
        body += (sound.reason ?? sound.lastError).map(JSONText.quote) ?? "null"
        return .json(connected ? 200 : 503, body + "}\n")
    }

    /// A command's reply line as a response: `OK …` → 200 `{"ok": true, "reply": …}` (with the volume as a
    /// number for the volume command), `ERR code reason` → its status, a JSON line (status) as it is.
    static func commandResponse(_ line: String) -> HTTPResponse {
        let text = line.hasSuffix("\n") ? String(line.dropLast()) : line
        if text.hasPrefix("{") { return .json(200, text + "\n") }
        if text.hasPrefix("ERR ") {
            let parts = text.dropFirst(4).split(separator: " ", maxSplits: 1)
            let refusal = LineProtocol.Refusal(code: String(parts.first ?? "error"), reason: parts.count > 1 ? String(parts[1]) : "")
            return .failure(HTTPFailure(refusal))
        }
        let reply = text.hasPrefix("OK ") ? String(text.dropFirst(3)) : text
        var body = "{\"ok\":true,\"reply\":\(JSONText.quote(reply))"
        if reply.hasPrefix("volume") {
            let number = reply.split(separator: " ").compactMap { Int($0) }.first
            body += ",\"volume\":" + (number.map(String.init) ?? "null")
        }
        return .json(200, body + "}\n")
    }
}
