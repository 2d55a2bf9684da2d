import BobaoCore
import BobaoTestSupport
import Foundation
import Glibc

/// One HTTP/1.1 request to a test server over a loopback socket (`Connection: close`), and its response as
/// sent: the status, the headers, the body (by `Content-Length`, or up to the close).
struct HTTPCall {
    var status: Int
    var headers: [(String, String)]
    var body: String

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// The body as JSON fields (an object's members).
    var json: [String: JSONValue] {
        guard case .object(let members)? = try? JSONValue.parse(body) else { return [:] }
        return Dictionary(members.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    func string(_ name: String) -> String? {
        if case .string(let value)? = json[name] { return value }
        return nil
    }

    func number(_ name: String) -> Double? {
        if case .number(let value)? = json[name] { return value }
        return nil
    }

    /// Sends the request and reads the response; throws when the server closes without one.
    static func send(
        _ method: String, _ target: String, port: UInt16, headers: [(String, String)] = [], body: [UInt8] = [],
        timeout: Double = 30
    ) throws -> HTTPCall {
        let fd = try RawClient.connectLoopback(port: port)
        defer { close(fd) }
        var request = "\(method) \(target) HTTP/1.1\r\nConnection: close\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { request += "Host: 127.0.0.1:\(port)\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { request += "Content-Length: \(body.count)\r\n" }
        let bytes = Array((request + "\r\n").utf8) + body
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return try read(fd, timeout: timeout)
    }

    static func send(
        _ method: String, _ target: String, port: UInt16, headers: [(String, String)] = [], text: String, timeout: Double = 30
    ) throws -> HTTPCall {
        try send(method, target, port: port, headers: headers, body: Array(text.utf8), timeout: timeout)
    }

    /// Sends `request` as it is (a request line, headers and body the caller wrote) and reads the response.
    static func sendRaw(_ request: [UInt8], port: UInt16, timeout: Double = 30) throws -> HTTPCall {
        let fd = try RawClient.connectLoopback(port: port)
        defer { close(fd) }
        _ = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return try read(fd, timeout: timeout)
    }

    /// Reads one response (the server closes after it).
    static func read(_ fd: Int32, timeout: Double) throws -> HTTPCall {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            received += chunk[..<count]
        }
        guard let response = parse(received) else {
            throw POSIXError(.EPROTO, userInfo: [NSLocalizedDescriptionKey: "no HTTP response: \(String(decoding: received, as: UTF8.self))"])
        }
        return response
    }

    static func parse(_ bytes: [UInt8]) -> HTTPCall? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        let headers = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Array(bytes[(end + 4)...])
        if let length = headers.first(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int($0.1) }) {
            body = Array(body.prefix(length))
        }
        return HTTPCall(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))
    }
}

extension ServerProcess {
    /// A `bobao serve --http 127.0.0.1:0` on the given sound server, with its HTTP port.
    static func withHTTP(_ arguments: [String] = [], sound: TestSoundServer.Connection) throws -> (ServerProcess, UInt16) {
        let server = try ServerProcess(arguments: ["--http", "127.0.0.1:0"] + arguments, pulseServer: sound.address)
        guard let port = server.httpPort else { throw POSIXError(.EPROTO, userInfo: [NSLocalizedDescriptionKey: "no HTTP port printed"]) }
        return (server, port)
    }
}

/// `GET /events` read as it streams (HTTP/1.0, so the events arrive unchunked until the server closes).
final class EventStreamReader: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSCondition()
    private var text = ""
    private var closed = false

    init(port: UInt16, headers: [(String, String)] = []) throws {
        fd = try RawClient.connectLoopback(port: port)
        var request = "GET /events HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        _ = Array((request + "\r\n").utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Thread { [self] in
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                lock.lock()
                if count <= 0 {
                    closed = true
                } else {
                    text += String(decoding: chunk[..<count], as: UTF8.self)
                }
                lock.broadcast()
                lock.unlock()
                if count <= 0 { break }
            }
        }.start()
    }

    deinit { close(fd) }

    /// Stops reading: the server sees the connection close.
    func disconnect() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// Waits, waking on every read, until `predicate` holds for the events so far or `timeout` passes.
    @discardableResult
    func waitFor(timeout: Double, _ predicate: ([Event]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while !predicate(Self.events(in: text)) {
            if closed || !lock.wait(until: deadline) { return predicate(Self.events(in: text)) }
        }
        return true
    }

    var events: [Event] { lock.withLock { Self.events(in: text) } }
    var raw: String { lock.withLock { text } }

    struct Event: Equatable {
        var id: UInt64?
        var name: String
        var data: String

        func field(_ name: String) -> JSONValue? {
            guard case .object(let members)? = try? JSONValue.parse(data) else { return nil }
            return members.first { $0.name == name }?.value
        }

        var number: Int? {
            if case .number(let value)? = field("number") { return Int(value) }
            return nil
        }
    }

    /// The complete events in the stream (after its headers), in order.
    static func events(in text: String) -> [Event] {
        guard let start = text.range(of: "\r\n\r\n") else { return [] }
        var events: [Event] = []
        for block in text[start.upperBound...].components(separatedBy: "\n\n").dropLast() {
            var event = Event(id: nil, name: "message", data: "")
            var hasData = false
            for line in block.split(separator: "\n", omittingEmptySubsequences: true) {
                if line.hasPrefix("id: ") { event.id = UInt64(line.dropFirst(4)) }
                if line.hasPrefix("event: ") { event.name = String(line.dropFirst(7)) }
                if line.hasPrefix("data: ") { event.data = String(line.dropFirst(6)); hasData = true }
            }
            if hasData { events.append(event) }
        }
        return events
    }
}
