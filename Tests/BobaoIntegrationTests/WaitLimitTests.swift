import BobaoCore
import BobaoServer
import Foundation
import Synchronization
import Testing

/// The listener's side of `"wait": true`, in process with a scripted board: the cap on waits a connection
/// may hold, and a connection that stays open, not idle, until its last outcome is sent.
@Suite(.serialized)
struct WaitLimitTests {
    /// A listener whose submissions are accepted with events to follow; `finish` sends them their outcome.
    final class Scripted: Sendable {
        final class Replies: Sendable {
            /// Every submission's number (counting from 1), and the reply closure of those that wait.
            let list = Mutex<(count: UInt64, waiting: [(UInt64, @Sendable (LineListener.SubmitReply) -> Void)])>((0, []))
        }

        let replies = Replies()
        let listener: LineListener

        init(maximumWaits: Int, idleSeconds: Double = 60) throws {
            var limits = LineListener.Limits()
            limits.maximumWaits = maximumWaits
            var session = LineSession.Configuration()
            session.idleTimeoutSeconds = idleSeconds
            let replies = self.replies
            listener = try LineListener(
                address: ListenAddress(host: "127.0.0.1", port: 0), limits: limits, session: session,
                ledger: PeerLedger(rateLimiter: RateLimiter(perSecond: 0, burst: 1)),
                submit: { submission, _, reply in
                    let number = replies.list.withLock { list in
                        list.count += 1
                        if submission.wait { list.waiting.append((list.count, reply)) }
                        return list.count
                    }
                    reply(.accepted(number: number, duplicate: false, watching: submission.wait))
                })
            listener.start()
        }

        /// Sends every waiting submission its `done`.
        func finish() {
            let waiting = replies.list.withLock { list in
                defer { list.waiting.removeAll() }
                return list.waiting
            }
            for (number, reply) in waiting {
                reply(.event(AnnouncementEvent.done.line(number: number, clientID: nil), final: true))
            }
        }

        func connect() throws -> LineClient {
            let port = try #require(UInt16(listener.boundAddress.split(separator: ":").last!))
            return try LineClient(connectingTo: ListenAddress(host: "127.0.0.1", port: port))
        }
    }

    @Test func aConnectionMayAwaitOnlySoManyAnnouncementsAtOnce() throws {
        let server = try Scripted(maximumWaits: 2)
        defer { server.listener.stop() }
        let client = try server.connect()
        for text in ["一", "二", "三"] { try client.send(#"{"text":"\#(text)","wait":true}"# + "\n") }
        try client.send("四\n")  // a plain line needs no wait: still accepted
        #expect(client.readLine() == "OK 1")
        #expect(client.readLine() == "OK 2")
        #expect(client.readLine() == "ERR too-many-waits 2 announcements are awaited on this connection already; "
            + "wait for their outcomes or use another connection")
        #expect(client.readLine() == "OK 3")
        server.finish()
        #expect(client.readLine() == #"{"event":"done","number":1,"id":null}"#)
        #expect(client.readLine() == #"{"event":"done","number":2,"id":null}"#)
        // Their outcomes in, it may wait again.
        try client.send(#"{"text":"五","wait":true}"# + "\n")
        #expect(client.readLine() == "OK 4")
    }

    @Test func aConnectionAwaitingAnOutcomeIsNotIdleAndClosesAfterIt() throws {
        let server = try Scripted(maximumWaits: 4, idleSeconds: 0.3)
        defer { server.listener.stop() }
        let client = try server.connect()
        try client.send(#"{"text":"等","wait":true}"# + "\n")
        client.finishSending()
        #expect(client.readLine() == "OK 1")
        // The behaviour under test is time passing: well past the idle timeout, the wait holds it open.
        let until = Date().addingTimeInterval(1)
        while Date() < until { Thread.sleep(forTimeInterval: 0.1) }
        server.finish()
        #expect(client.readLine() == #"{"event":"done","number":1,"id":null}"#)
        #expect(client.readLine() == nil, "closed once its last outcome is sent")
    }
}
