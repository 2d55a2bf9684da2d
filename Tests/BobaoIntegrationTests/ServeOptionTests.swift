import Foundation
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

/// Every `serve` option also comes from `BOBAO_<OPTION>`; options win; `--print-config` says where each
/// value came from; a bad variable is a start-up error naming it.
struct ServeEnvironmentTests {
    /// `--print-config`'s rows: name → (value, source).
    func settings(_ arguments: [String], _ environment: [String: String] = [:]) throws -> [String: (String, String)] {
        let result = try BobaoBinary.run(["serve", "--print-config"] + arguments, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        var rows: [String: (String, String)] = [:]
        for line in result.stdoutText.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard parts.count >= 3 else { continue }
            rows[parts[0]] = (parts[1...].dropLast().joined(separator: " "), parts.last!)
        }
        return rows
    }

    @Test func aVariableSetsAnOptionAndTheFlagWins() throws {
        let fromVariable = try settings([], ["BOBAO_QUEUE": "500", "BOBAO_GAP": "120", "BOBAO_NO_SPOOL": "yes"])
        #expect(fromVariable["queue"]! == ("500", "BOBAO_QUEUE"))
        #expect(fromVariable["gap"]! == ("120", "BOBAO_GAP"))
        #expect(fromVariable["no-spool"]! == ("true", "BOBAO_NO_SPOOL"))
        #expect(fromVariable["ttl"]! == ("120", "default"))
        let flagWins = try settings(["--queue", "7", "--spool", "/tmp/bobao-test-spool.db"],
                                    ["BOBAO_QUEUE": "500", "BOBAO_NO_SPOOL": "1"])
        #expect(flagWins["queue"]! == ("7", "--queue"))
        #expect(flagWins["spool"]! == ("/tmp/bobao-test-spool.db", "--spool"), "--spool drops BOBAO_NO_SPOOL")
        // An empty variable (BOBAO_SINK= in /etc/default/bobao) is as good as unset.
        let empty = try settings([], ["BOBAO_SINK": "", "BOBAO_NO_SPOOL": "false"])
        #expect(empty["sink"]!.1 == "default")
        #expect(empty["no-spool"]! == ("false", "BOBAO_NO_SPOOL"))
    }

    @Test func everyOptionHasItsVariable() throws {
        let help = try BobaoBinary.run(["serve", "--help"]).stdoutText
        let names = help.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  --") else { return nil }
            return String(line.dropFirst(4).prefix { $0 != " " })
        }.filter { $0 != "print-config" }
        #expect(names.count >= 27, "\(names)")
        // A value each option accepts, given through its variable only.
        let samples = ["listen": "127.0.0.1:7795", "http": "127.0.0.1:8095", "mqtt": "mqtt://127.0.0.1:1883",
                       "mqtt-user": "kiosk", "node": "till-3", "group": "front,kitchen", "mqtt-prefix": "shop/bobao", "token": "s3cret", "allow": "10.0.0.0/8", "voice": "zh", "rate": "200",
                       "pitch": "60", "volume": "90", "sink": "kiosk", "media-role": "phone", "keepalive": "noise",
                       "keepalive-level": "-70", "gap": "50", "duck": "0.5", "chime": "ding", "queue": "9", "ttl": "30",
                       "max-speech": "20", "spool": "/tmp/bobao-env-test.db", "no-spool": "false", "max-line": "2048",
                       "encoding": "gbk", "max-connections": "8", "idle-timeout": "9", "line-rate": "3", "line-burst": "4",
                       "rate-limit-loopback": "true", "shutdown-timeout": "2"]
        #expect(Set(samples.keys) == Set(names), "a sample for every option")
        var environment: [String: String] = [:]
        for (name, value) in samples {
            environment["BOBAO_" + name.uppercased().replacingOccurrences(of: "-", with: "_")] = value
        }
        let rows = try settings([], environment)
        for name in names {
            let variable = "BOBAO_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
            #expect(rows[name]?.1 == variable, "\(name): \(String(describing: rows[name]))")
        }
        #expect(rows["token"]?.0.contains("s3cret") == false, "the secret is not printed")
        #expect(rows["encoding"]?.0 == "gbk" && rows["keepalive-level"]?.0 == "-70" && rows["listen"]?.0 == "127.0.0.1:7795")
    }

    @Test(arguments: [
        ("BOBAO_QUEUE", "lots", "BOBAO_QUEUE must be"), ("BOBAO_NO_SPOOL", "maybe", "BOBAO_NO_SPOOL must be true or false"),
        ("BOBAO_LISTEN", "a b", "BOBAO_LISTEN: "), ("BOBAO_DUCK", "2", "BOBAO_DUCK must be"),
        ("BOBAO_KEEPALIVE", "loud", "BOBAO_KEEPALIVE must be"), ("BOBAO_VOICE", "nosuchvoice", "BOBAO_VOICE: "),
        ("BOBAO_ALLOW", "10.0.0.0/99", "BOBAO_ALLOW: "), ("BOBAO_RATE", "9000", "BOBAO_RATE must be"),
    ])
    func aBadVariableIsAStartUpErrorNamingIt(variable: String, value: String, message: String) throws {
        // --print-config: a variable that were wrongly taken would print, not serve forever.
        let result = try BobaoBinary.run(["serve", "--print-config"], environment: [variable: value])
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.first?.contains(message) == true, "\(result.stderr)")
        #expect(lines.count == 2 && lines[1].contains("bobao serve --help"), "one line and a hint: \(result.stderr)")
    }

    /// A misspelt variable in /etc/default/bobao is named in the log with the setting it was meant for;
    /// unrelated BOBAO_ variables are not.
    @Test func aMisspeltVariableIsLoggedWithTheSettingMeant() throws {
        let result = try BobaoBinary.run(["serve", "--no-spool", "--listen", "no-such-host.invalid:0"],
                                         environment: ["BOBAO_QUEU": "3", "BOBAO_SOMETHING_ELSE_ENTIRELY": "1"])
        #expect(result.stderr.contains("warning: BOBAO_QUEU is set but no setting reads it; did you mean BOBAO_QUEUE?"), "\(result.stderr)")
        #expect(!result.stderr.contains("BOBAO_SOMETHING_ELSE_ENTIRELY"))
    }

    /// A flag wins over a variable also where settings depend on each other; --print-config refuses what
    /// serve would refuse; an odd STATE_DIRECTORY is survived.
    @Test func flagsWinAcrossDependentSettingsAndPrintConfigChecksLikeServe() throws {
        let rows = try settings(["--keepalive", "off"], ["BOBAO_KEEPALIVE": "noise", "BOBAO_KEEPALIVE_LEVEL": "-50"])
        #expect(rows["keepalive"]! == ("off", "--keepalive"))
        #expect(rows["keepalive-level"]?.0.hasPrefix("(unused") == true)
        let unguarded = try BobaoBinary.run(["serve", "--print-config"], environment: ["BOBAO_LISTEN": "0.0.0.0:7777"])
        #expect(unguarded.status == 2 && unguarded.stderr.contains("refusing to listen on 0.0.0.0:7777"), "\(unguarded.stderr)")
        let odd = try settings([], ["STATE_DIRECTORY": ":"])
        #expect(odd["spool"]?.0.hasSuffix("/bobao/spool.db") == true, "\(String(describing: odd["spool"]))")
        let state = try settings([], ["STATE_DIRECTORY": "/var/lib/bobao/kiosk:/var/lib/other"])
        #expect(state["spool"]?.0 == "/var/lib/bobao/kiosk/spool.db")
    }

    @Test func aListenPortAloneIsLoopbackAndAHostNameResolves() throws {
        #expect(try settings(["--listen", "7790"])["listen"]!.0 == "127.0.0.1:7790")
        let unresolvable = try BobaoBinary.run(["serve", "--no-spool", "--listen", "no-such-host.invalid:0"])
        #expect(unresolvable.status != 0)
        #expect(unresolvable.stderr.contains("cannot resolve 'no-such-host.invalid'"), "\(unresolvable.stderr)")
    }
}

/// README's table of `serve` options is the one place a user reads them all: it must list every option
/// with its variable, and its defaults must be the program's.
struct ServeOptionDocumentationTests {
    @Test func theReadmeTableListsEveryOptionItsVariableAndItsDefault() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        // The table of the section "`bobao serve` options", up to the next heading of its level.
        let section = try #require(readme.components(separatedBy: "### `bobao serve` options").dropFirst().first)
            .components(separatedBy: "\n### ")[0]
        var table: [String: (variable: String, defaultValue: String)] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| `--") {
            let cells = line.replacingOccurrences(of: "\\|", with: "/").split(separator: "|")
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3 else { continue }
            let name = String(cells[0].dropFirst(3).prefix { $0 != " " && $0 != "`" })
            table[name] = (cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")),
                           cells[2].trimmingCharacters(in: CharacterSet(charactersIn: "`")))
        }
        let printed = try BobaoBinary.run(["serve", "--print-config", "--no-spool"], environment: ["BOBAO_NO_SPOOL": ""])
        #expect(printed.status == 0, "\(printed.stderr)")
        var rows = 0
        for line in printed.stdoutText.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ").map(String.init)
            let name = parts[0], value = parts.dropFirst().dropLast().joined(separator: " ")
            rows += 1
            let row = try #require(table[name], "README lists --\(name)")
            #expect(row.variable == "BOBAO_" + name.uppercased().replacingOccurrences(of: "-", with: "_"), "\(name)")
            if !value.hasPrefix("("), !["spool", "no-spool"].contains(name) {
                #expect(row.defaultValue == value, "README's default for --\(name): \(row.defaultValue), the program's: \(value)")
            }
        }
        #expect(rows == table.count && rows >= 27, "\(rows) settings, \(table.count) README rows")
    }
}
