import BobaoCore
import BobaoPlatform
import CLinux
import Glibc
import Synchronization

/// One client connection on the listener thread: its socket, its `LineSession`, and its replies in the
/// order of the lines they answer. A reply to an announcement arrives later (once the spool has it on disk),
/// so replies wait in `slots` until every reply before them is known.
final class Connection {
    let descriptor: FileDescriptor
    /// Never reused while the server runs (unlike descriptor numbers): completions find their connection by it.
    let serial: UInt64
    var session: LineSession
    /// Bytes ready to send, from `outputOffset` on.
    private(set) var output: [UInt8] = []
    private var outputOffset = 0
    /// Replies not yet movable to `output`: the first one waits for its announcement's outcome.
    private var slots: [Slot] = []
    private var slotBytes = 0
    private(set) var waitingReplies = 0
    private var nextTicket: UInt64 = 0
    /// The client closed its sending side.
    var readClosed = false
    /// The session ended: once its last replies are sent the write side is shut and the input discarded
    /// until the client closes or `lingerUntil` passes.
    var finalReplyQueued = false
    var lingerUntil: Double?
    /// Complete lines wait in the session because the replies hit their caps.
    var heldBack = false
    /// Messages sent with `"wait": true` whose outcome has not been sent yet: the connection stays open (and
    /// is not idle) until they have all ended.
    var waits = 0
    var watched: UInt32 = 0

    private struct Slot {
        var ticket: UInt64
        var text: String?
    }

    init(descriptor: consuming FileDescriptor, serial: UInt64, session: LineSession) {
        self.descriptor = descriptor
        self.serial = serial
        self.session = session
    }

    var fd: Int32 { descriptor.rawValue }

    /// Unsent reply bytes, including those queued behind a reply not yet known.
    var pendingOutput: Int { output.count - outputOffset + slotBytes }

    var hasUnsentOutput: Bool { output.count > outputOffset }

    /// Everything answered and sent.
    var isDrained: Bool { slots.isEmpty && output.count == outputOffset }

    func reply(_ text: String) {
        if slots.isEmpty {
            output.append(contentsOf: text.utf8)
        } else {
            slots.append(Slot(ticket: 0, text: text))
            slotBytes += text.utf8.count
        }
    }

    /// Reserves the place of a reply that will come later; returns its ticket for `resolve`.
    func reserveReply() -> UInt64 {
        nextTicket += 1
        slots.append(Slot(ticket: nextTicket, text: nil))
        waitingReplies += 1
        return nextTicket
    }

    /// The reply for `ticket` is known: replies that no longer wait move to the output.
    func resolve(_ ticket: UInt64, _ text: String) {
        guard let index = slots.firstIndex(where: { $0.ticket == ticket && $0.text == nil }) else { return }
        slots[index].text = text
        slotBytes += text.utf8.count
        waitingReplies -= 1
        var ready = 0
        while ready < slots.count, let text = slots[ready].text {
            output.append(contentsOf: text.utf8)
            slotBytes -= text.utf8.count
            ready += 1
        }
        slots.removeFirst(ready)
    }

    /// Sends what the socket takes. Throws if the peer is gone.
    func send() throws(SystemError) {
        while output.count > outputOffset {
            let (sent, failure) = output.withUnsafeBytes { bytes -> (Int?, SystemError?) in
                do throws(SystemError) {
                    return (try Posix.nonBlocking("send") {
                        Glibc.send(fd, bytes.baseAddress! + outputOffset, bytes.count - outputOffset, Int32(MSG_NOSIGNAL))
                    }, nil)
                } catch {
                    return (nil, error)
                }
            }
            if let failure { throw failure }
            guard let sent else { break }
            outputOffset += sent
        }
        if output.count == outputOffset {
            // Keep a small buffer; give a big one back (a flood of refusals must not stay in memory).
            output.removeAll(keepingCapacity: output.capacity <= 4096)
            outputOffset = 0
        } else if outputOffset > 16 * 1024 {
            output.removeFirst(outputOffset)
            outputOffset = 0
        }
    }
}

/// Outcomes of submitted announcements, posted from whichever thread learns them (the spool writer) and
/// taken by the listener thread, which `wake` rouses. Owns the eventfd, so a late completion never writes
/// to a descriptor that was closed and reused.
final class CompletionInbox: Sendable {
    struct Completion: Sendable {
        var serial: UInt64
        var ticket: UInt64
        var reply: LineListener.SubmitReply
        /// The submission asked `"wait": true` (and was counted in `Connection.waits`).
        var waited = false
    }

    private let pending = Mutex<[Completion]>([])
    private let event: FileDescriptor

    init() throws(SystemError) {
        event = try FileDescriptor("eventfd") { eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK)) }
    }

    var fd: Int32 { event.rawValue }

    func post(_ completion: Completion) {
        // One wake-up for a run of completions: the listener takes them all at once.
        let first = pending.withLock { pending in
            pending.append(completion)
            return pending.count == 1
        }
        if first { wake() }
    }

    func wake() {
        var one: UInt64 = 1
        _ = write(event.rawValue, &one, 8)
    }

    /// Everything posted so far; clears the wake-up.
    func take() -> [Completion] {
        var count: UInt64 = 0
        _ = read(event.rawValue, &count, 8)
        return pending.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
    }
}
