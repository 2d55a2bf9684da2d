import BobaoCore
import Testing

/// `{"cmd": "volume"}` through `LineProtocol.parse`: a whole percent from 0 to 100, or a question; every
/// other value a `bad-field` refusal that names `value`.
struct VolumeCommandTests {
    let json = JSONRequestTests()

    @Test func theVolumeCommandSetsAWholePercentOrAsks() {
        #expect(json.parse(#"{"cmd": "volume", "value": 70}"#) == .command(.volume(70)))
        #expect(json.parse(#"{"value": 0, "cmd": "volume"}"#) == .command(.volume(0)))
        #expect(json.parse(#"{"cmd": "volume", "value": 100}"#) == .command(.volume(100)))
        #expect(json.parse(#"{"cmd": "volume", "value": 55.0}"#) == .command(.volume(55)))
        #expect(json.parse(#"{"cmd": "volume", "value": -0}"#) == .command(.volume(0)))
        #expect(json.parse(#"{"cmd": "volume"}"#) == .command(.volume(nil)))
        #expect(json.parse(#"{"cmd": "volume", "text": null, "id": null}"#) == .command(.volume(nil)))
        // Only a value given as null is refused, not read as a question.
        #expect(json.reply(#"{"cmd": "volume", "value": null}"#)
            == "ERR bad-field value must be a whole number from 0 to 100 (leave it out to ask for the volume)\n")
        // Elsewhere a null value is left out, as any null field is.
        #expect(json.parse(#"{"cmd": "skip", "value": null}"#) == .command(.skip))
    }

    @Test(arguments: [
        (#"{"cmd": "volume", "value": "70"}"#, "value must be a whole number from 0 to 100"),
        (#"{"cmd": "volume", "value": 70.5}"#, "value must be a whole number from 0 to 100"),
        (#"{"cmd": "volume", "value": -1}"#, "value must be a whole number from 0 to 100"),
        (#"{"cmd": "volume", "value": 101}"#, "value must be a whole number from 0 to 100"),
        (#"{"cmd": "volume", "value": 1e400}"#, "value must be a whole number from 0 to 100"),
        (#"{"cmd": "volume", "value": -1e400}"#, "value must be a whole number from 0 to 100"),
        (#"{"cmd": "volume", "value": 9223372036854775808}"#, "value must be a whole number from 0 to 100"),
        (#"{"cmd": "volume", "value": true}"#, "value must be a whole number from 0 to 100"),
        (#"{"cmd": "volume", "value": [70]}"#, "value must be a whole number from 0 to 100"),
        (#"{"cmd": "volume", "value": {"percent": 70}}"#, "value must be a whole number from 0 to 100"),
        (#"{"cmd": "volume", "value": 70, "value": 80}"#, "value given twice"),
        (#"{"cmd": "volume", "volume": 70}"#, #"volume does not go with "cmd" (the volume command takes "value")"#),
        (#"{"cmd": "volume", "value": 70, "text": "a"}"#, #"text does not go with "cmd""#),
        (#"{"cmd": "volume", "value": 70, "id": "x"}"#, #"id goes only with "cmd": "cancel""#),
        (#"{"cmd": "volume", "value": 70, "percent": 70}"#,
         "percent unknown field (known: text, priority, repeat, chime, voice, rate, pitch, volume, id, ttl, max_speech, wait, cmd, all, value)"),
        (#"{"cmd": "skip", "value": 70}"#, #"value goes only with "cmd": "volume""#),
        (#"{"text": "a", "value": 70}"#, #"value goes only with "cmd": "volume""#),
        (#"{"value": 70}"#, #"value goes only with "cmd": "volume""#),
        (#"{"cmd": "Volume", "value": 70}"#, #"cmd unknown command "Volume" (cancel, skip, clear, status, volume)"#),
        (#"{"cmd": ["volume"], "value": 70}"#, "cmd must be a string: cancel, skip, clear, status or volume"),
    ])
    func badVolumesAreNamed(line: String, expected: String) {
        #expect(json.reply(line) == "ERR bad-field \(expected)\n")
    }
}
