import BobaoAudio
import BobaoCore
import Synchronization

/// Bobao's own stream volume, which `{"cmd": "volume", "value": N}` (`bobao volume N`) sets without a
/// restart: applied to the output at once (and by it to every stream it opens later), and kept in the
/// spool's `settings` table, so the next start applies it again. With `--no-spool` it lives in memory only,
/// and the replies and the log say so. Until a client sets it, the volume is left to the sound server.
///
/// A new volume is stored on the spool writer's thread, the one thread that writes the spool, behind the
/// submissions before it; it is applied and answered once it is on disk. One that cannot be stored is
/// refused (`ERR spool-failed`) and changes nothing.
public final class StreamVolume: Sendable {
    private let output: any AudioOutput
    private let board: AnnouncementBoard
    private let log: @Sendable (String) -> Void
    /// The volume a client set (nil: none did, the sound server's own).
    private let current: Mutex<Int?>

    /// What `--no-spool` changes in replies and the log.
    static let inMemoryNote = "in memory only: --no-spool"

    /// Applies `saved` (the spool's, read at start) to `output`, and logs it. Without one nothing is logged:
    /// the stream gets the sound server's own volume, as it always did.
    public init(output: any AudioOutput, board: AnnouncementBoard, saved: Int?, log: @escaping @Sendable (String) -> Void) {
        self.output = output
        self.board = board
        self.log = log
        current = Mutex(saved)
        if let saved {
            output.setVolume(percent: saved)
            log("stream volume \(saved) % (set by `bobao volume`)")
        }
    }

    /// The volume a client set, or nil.
    public var percent: Int? { current.withLock { $0 } }

    /// The reply to `{"cmd": "volume"}`: `OK volume 70`, or `OK volume not set (the sound server's own)`.
    public func report() -> String {
        guard let percent else { return "OK volume not set (the sound server's own)\n" }
        return "OK volume \(percent)\n"
    }

    /// Sets the volume for `peer`; `reply` gets `OK volume set to 70` once it is applied and on disk (with
    /// `--no-spool`: `OK volume set to 70 (in memory only: --no-spool)`), or `ERR spool-failed …`.
    public func set(_ percent: Int, by peer: String, reply: @escaping @Sendable (String) -> Void) {
        guard let spool = board.spool else {
            apply(percent, by: peer, note: " (\(Self.inMemoryNote))")
            return reply("OK volume set to \(percent) (\(Self.inMemoryNote))\n")
        }
        board.afterPendingSubmissions { [self] in
            // The same value again is applied (the sound server's mixer may have changed the stream since),
            // but costs no write.
            if percent != self.percent {
                do throws(AnnouncementSpool.Failure) {
                    try spool.storeStreamVolume(percent)
                } catch {
                    log(LogPriority.warning + "stream volume not changed to \(percent) % for \(peer): \(error.description)")
                    let refusal = LineProtocol.Refusal(
                        code: "spool-failed", reason: "the volume was not changed: \(error.description)")
                    return reply(LineProtocol.error(refusal))
                }
            }
            apply(percent, by: peer, note: "")
            reply("OK volume set to \(percent)\n")
        }
    }

    private func apply(_ percent: Int, by peer: String, note: String) {
        let previous = current.withLock { current in
            defer { current = percent }
            output.setVolume(percent: percent)
            return current
        }
        guard previous != percent else { return }
        let was = previous.map { "\($0) %" } ?? "the sound server's own"
        log("stream volume set to \(percent) % by \(peer) (was \(was))\(note)")
    }
}
