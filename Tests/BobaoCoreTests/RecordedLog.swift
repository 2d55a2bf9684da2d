import BobaoServer
import Foundation

/// An `EventLog` that keeps its lines, for tests to read and wait on.
final class RecordedLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [String] = []

    var eventLog: EventLog {
        EventLog(journal: false) { [self] line in
            condition.withLock {
                lines.append(line)
                condition.broadcast()
            }
        }
    }

    /// Every line written so far (each still ending in its newline).
    var written: [String] { condition.withLock { lines } }

    var text: String { written.joined() }

    /// Waits, waking on every line, until the log contains `text` or `timeout` seconds pass.
    @discardableResult
    func waitFor(_ text: String, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !lines.contains(where: { $0.contains(text) }) {
            if !condition.wait(until: deadline) { return lines.contains(where: { $0.contains(text) }) }
        }
        return true
    }

    /// Where `text` first appears, as a line number; nil if nowhere.
    func lineNumber(of text: String) -> Int? { written.firstIndex { $0.contains(text) } }
}
