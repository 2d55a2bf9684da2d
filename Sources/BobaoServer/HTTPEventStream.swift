import BobaoCore
import CMicroHTTPD
import Synchronization

/// One `GET /events` response: server-sent events, sent as they come. Its text is buffered here and
/// libmicrohttpd pulls it through a content reader; with nothing to send, the reader suspends the connection
/// and `send` resumes it. A client that does not read (its buffer passes `maximumBufferedBytes`) is dropped
/// rather than let grow.
final class HTTPEventStream: Sendable {
    nonisolated(unsafe) let connection: OpaquePointer
    /// The peer's address, for the per-address limit.
    let host: String
    static let maximumBufferedBytes = 1 << 20
    private let state = Mutex<State>(State())
    /// Unsubscribes from the feed, once the response is done.
    private let onEnd: @Sendable () -> Void

    private struct State {
        var buffered: [UInt8] = []
        var sent = 0
        var ended = false
        var suspended = false
        var released = false
    }

    init(connection: OpaquePointer, host: String, onEnd: @escaping @Sendable () -> Void) {
        self.connection = connection
        self.host = host
        self.onEnd = onEnd
    }

    /// Adds text to send, from any thread.
    func send(_ text: String) {
        let resume = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            if state.buffered.count - state.sent + text.utf8.count > Self.maximumBufferedBytes {
                state.ended = true  // too slow a reader: the stream ends, it may reconnect
            } else {
                if state.sent > 0 && state.sent >= state.buffered.count / 2 {
                    state.buffered.removeFirst(state.sent)
                    state.sent = 0
                }
                state.buffered.append(contentsOf: text.utf8)
            }
            defer { state.suspended = false }
            return state.suspended
        }
        if resume { bobao_mhd_resume_connection(connection) }
    }

    /// Ends the stream after what is buffered (at shutdown), from any thread.
    func end() {
        let resume = state.withLock { state -> Bool in
            state.ended = true
            defer { state.suspended = false }
            return state.suspended
        }
        if resume { bobao_mhd_resume_connection(connection) }
    }

    /// Queues the streaming response (on libmicrohttpd's thread). The response holds the stream until
    /// libmicrohttpd frees it.
    func queue(on connection: OpaquePointer) -> MHD_Result {
        let context = Unmanaged.passRetained(self).toOpaque()
        let response = bobao_mhd_create_response_from_callback(
            UInt64.max, 16 * 1024,
            { context, _, buffer, capacity in
                Unmanaged<HTTPEventStream>.fromOpaque(context!).takeUnretainedValue().read(into: buffer!, capacity: capacity)
            },
            context,
            { context in
                let stream = Unmanaged<HTTPEventStream>.fromOpaque(context!).takeRetainedValue()
                stream.released()
            })
        guard let response else {
            Unmanaged<HTTPEventStream>.fromOpaque(context).release()
            return .NO
        }
        defer { bobao_mhd_destroy_response(response) }
        HTTPResponse.addHeaders(to: response, contentType: "text/event-stream; charset=utf-8", extra: [("X-Accel-Buffering", "no")])
        return bobao_mhd_queue_response(connection, 200, response)
    }

    /// The content reader: what is buffered, or the end, or (nothing yet) suspends the connection.
    private func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        state.withLock { state -> Int in
            let available = state.buffered.count - state.sent
            if available > 0 {
                let count = min(available, capacity)
                state.buffered.withUnsafeBytes { bytes in
                    UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + state.sent, byteCount: count)
                }
                state.sent += count
                return count
            }
            if state.ended { return -1 }  // MHD_CONTENT_READER_END_OF_STREAM
            bobao_mhd_suspend_connection(connection)
            state.suspended = true
            return 0
        }
    }

    private func released() {
        let first = state.withLock { state -> Bool in
            defer { state.released = true; state.ended = true }
            return !state.released
        }
        if first { onEnd() }
    }
}
