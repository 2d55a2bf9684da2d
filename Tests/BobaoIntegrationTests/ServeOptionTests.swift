import BobaoTestSupport
import Testing

/// `bobao serve` refuses numbers out of range with a clear error naming the option, before anything starts:
/// a typo must never become an overflow later.
struct ServeOptionTests {
    @Test(arguments: [
        ("--ttl", "0"), ("--ttl", "9223372036854775807"), ("--max-speech", "99999999999"),
        ("--shutdown-timeout", "-1"), ("--idle-timeout", "9223372036854775807"), ("--queue", "0"),
        ("--max-line", "99999999"), ("--max-connections", "0"), ("--line-rate", "-5"), ("--gap", "10001"),
    ])
    func outOfRangeNumbersAreRefusedByName(option: String, value: String) throws {
        let result = try BobaoBinary.run(["serve", "--listen", "127.0.0.1:0", "--no-spool", option, value])
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(option) must be"), "\(result.stderr)")
    }
}
