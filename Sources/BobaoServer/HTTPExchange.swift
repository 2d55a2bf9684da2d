import BobaoCore
import CMicroHTTPD
import Synchronization

/// A response to send: status, type, body and extra headers.
struct HTTPResponse: Sendable {
    var status: Int
    var contentType: String
    var body: [UInt8]
    var headers: [(String, String)] = []

    static func json(_ status: Int, _ text: String, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json; charset=utf-8", body: Array(text.utf8), headers: headers)
    }

    static func failure(_ failure: HTTPFailure, headers: [(String, String)] = []) -> HTTPResponse {
        var headers = headers
        if failure.status == 429 || failure.status == 503 { headers.append(("Retry-After", "1")) }
        return .json(failure.status, failure.json, headers: headers)
    }

    /// Queues the response on the connection (on libmicrohttpd's thread, from its access handler).
    func queue(on connection: OpaquePointer) -> MHD_Result {
        let response = body.withUnsafeBytes { bytes in
            bobao_mhd_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let response else { return .NO }
        defer { bobao_mhd_destroy_response(response) }
        HTTPResponse.addHeaders(to: response, contentType: contentType, extra: headers)
        return bobao_mhd_queue_response(connection, UInt32(status), response)
    }

    static func addHeaders(to response: OpaquePointer, contentType: String, extra: [(String, String)]) {
        bobao_mhd_add_response_header(response, "Content-Type", contentType)
        bobao_mhd_add_response_header(response, "Cache-Control", "no-store")
        bobao_mhd_add_response_header(response, "X-Content-Type-Options", "nosniff")
        for (name, value) in extra { bobao_mhd_add_response_header(response, name, value) }
    }
}

/// One HTTP request while libmicrohttpd handles it: what was asked, the body as it arrives, and the answer,
/// which may come later from another thread (an announcement stored in the spool, or spoken with `?wait=1`).
/// Then the connection is suspended until `deliver` resumes it.
final class HTTPExchange: Sendable {
    /// libmicrohttpd's connection: used on its thread, but for `MHD_resume_connection`, which any thread may call.
    nonisolated(unsafe) let connection: OpaquePointer
    let method: String
    let path: String
    /// `host:port` of the peer, and its address alone.
    let peer: String
    let host: String
    let isLoopback: Bool
    let state = Mutex<State>(State())

    struct State {
        var body: [UInt8] = []
        var bodyTooLarge = false
        var discarded = 0
        /// Handed to its route (after the whole body arrived).
        var dispatched = false
        /// Answered already (a refusal before the body, say): the rest is ignored.
        var answered = false
        var response: HTTPResponse?
        var suspended = false
        /// Waiting on another thread: the server ends it at shutdown.
        var pending = false
    }

    init(connection: OpaquePointer, method: String, path: String, peer: String, host: String, isLoopback: Bool) {
        self.connection = connection
        self.method = method
        self.path = path
        self.peer = peer
        self.host = host
        self.isLoopback = isLoopback
    }

    /// A request header, or nil.
    func header(_ name: String) -> String? {
        bobao_http_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
    }

    /// The query's arguments, decoded, in order; nil when one is not valid UTF-8 once decoded.
    var query: [(name: String, value: String)]? {
        final class Box {
            var fields: [(name: String, value: String)] = []
            var valid = true
        }
        let box = Box()
        bobao_http_arguments(connection, { context, key, keySize, value, valueSize in
            let box = Unmanaged<Box>.fromOpaque(context!).takeUnretainedValue()
            func text(_ pointer: UnsafePointer<CChar>?, _ count: Int) -> String? {
                guard let pointer else { return "" }
                return UnsafeRawBufferPointer(start: pointer, count: count).withMemoryRebound(to: UInt8.self) {
                    String(validating: $0, as: UTF8.self)
                }
            }
            guard let name = text(key, keySize), let value = text(value, valueSize) else {
                box.valid = false
                return
            }
            box.fields.append((name, value))
        }, Unmanaged.passUnretained(box).toOpaque())
        return box.valid ? box.fields : nil
    }

    /// Adds uploaded bytes, up to `limit`; past it the body is dropped and marked too large, and what follows
    /// is counted and dropped. Returns false once more than `discardLimit` bytes have been dropped.
    func append(_ bytes: UnsafeRawBufferPointer, limit: Int, discardLimit: Int) -> Bool {
        state.withLock { state in
            if !state.bodyTooLarge && state.body.count + bytes.count > limit {
                state.bodyTooLarge = true
                state.discarded = state.body.count
                state.body = []
            }
            guard !state.bodyTooLarge else {
                state.discarded += bytes.count
                return state.discarded <= discardLimit
            }
            state.body.append(contentsOf: bytes)
            return true
        }
    }

    /// Gives the answer, from any thread: queued at once if the handler has not yet suspended, else the
    /// connection is resumed and the handler queues it. Only the first answer counts.
    func deliver(_ response: HTTPResponse) {
        let resume = state.withLock { state -> Bool in
            guard state.response == nil, !state.answered else { return false }
            state.response = response
            defer { state.suspended = false }
            return state.suspended
        }
        if resume { bobao_mhd_resume_connection(connection) }
    }

    /// On libmicrohttpd's thread, once the route has started something that answers later: queues the answer
    /// if it is there, else suspends the connection until `deliver`.
    func queueOrSuspend() -> MHD_Result {
        let ready = state.withLock { state -> HTTPResponse? in
            if let response = state.response {
                state.response = nil
                state.answered = true
                return response
            }
            bobao_mhd_suspend_connection(connection)
            state.suspended = true
            return nil
        }
        return ready?.queue(on: connection) ?? .YES
    }
}
