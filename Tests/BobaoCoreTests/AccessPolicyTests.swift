import BobaoCore
import BobaoServer
import Testing

struct AccessPolicyTests {
    @Test(arguments: [
        ("192.168.1.0/24", "192.168.1.77", true), ("192.168.1.0/24", "192.168.2.1", false),
        ("10.0.0.7", "10.0.0.7", true), ("10.0.0.7", "10.0.0.8", false), ("0.0.0.0/0", "8.8.8.8", true),
        ("fd00::/8", "fd12::1", true), ("fd00::/8", "fe80::1", false), ("192.168.1.0/24", "::ffff:192.168.1.5", true),
        ("192.168.1.0/24", "fd00::1", false),
    ])
    func rangesContainTheirAddresses(range: String, host: String, contained: Bool) throws {
        #expect(try AddressRange(parsing: range).contains(host) == contained)
    }

    @Test(arguments: ["192.168.1.0/33", "example.com", "10.0.0.0/x", "", "fd00::/129"])
    func badRangesAreRefusedByName(text: String) {
        #expect(throws: AddressRange.Invalid.self) { try AddressRange(parsing: text) }
    }

    @Test func loopbackIsAlwaysAdmittedAndOthersOnlyWhenListed() throws {
        let policy = AccessPolicy(allowed: [try AddressRange(parsing: "192.168.1.0/24")])
        #expect(policy.admits("127.0.0.1") && policy.admits("::1") && policy.admits("127.3.2.1"))
        #expect(policy.admits("192.168.1.9"))
        #expect(!policy.admits("192.168.9.9"))
        #expect(AccessPolicy().admits("203.0.113.5"), "without an allow list the listen address decides")
    }

    @Test func tokensMatchOnlyExactly() {
        let policy = AccessPolicy(token: "abc123")
        #expect(policy.tokenMatches("abc123"))
        #expect(!policy.tokenMatches("abc124"))
        #expect(!policy.tokenMatches("abc12"))
        #expect(!policy.tokenMatches("abc1234"))
        #expect(!policy.tokenMatches(""))
        #expect(!AccessPolicy().tokenMatches(""))
    }

    @Test func onlyLoopbackNeedsNoControl() throws {
        #expect(throws: Never.self) { try AccessPolicy().check(listeningOn: ListenAddress(host: "127.0.0.1", port: 1)) }
        #expect(throws: AccessPolicy.Unsafe.self) { try AccessPolicy().check(listeningOn: ListenAddress(host: "0.0.0.0", port: 1)) }
        #expect(throws: Never.self) {
            try AccessPolicy(token: "t").check(listeningOn: ListenAddress(host: "0.0.0.0", port: 1))
        }
    }
}
