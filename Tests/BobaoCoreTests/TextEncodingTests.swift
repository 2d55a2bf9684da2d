import BobaoCore
import Testing

/// Lines in GBK and GB18030 converted to UTF-8 with iconv, and refused when they are not valid.
struct TextEncodingTests {
    /// 新客户来了 in GBK (and GB18030, which agrees with GBK on it).
    static let newCustomerGBK: [UInt8] = [0xD0, 0xC2, 0xBF, 0xCD, 0xBB, 0xA7, 0xC0, 0xB4, 0xC1, 0xCB]

    @Test func namesAreReadInAnyCase() {
        #expect(TextEncoding(name: "utf-8") == .utf8)
        #expect(TextEncoding(name: "UTF8") == .utf8)
        #expect(TextEncoding(name: "gbk") == .gbk)
        #expect(TextEncoding(name: "GBK") == .gbk)
        #expect(TextEncoding(name: "Gb18030") == .gb18030)
        #expect(TextEncoding(name: "latin1") == nil)
        #expect(TextEncoding(name: "") == nil)
        #expect(TextEncoding.gbk.name == "GBK")
    }

    @Test func gbkAndGB18030BecomeUTF8() {
        #expect(TextEncoding.gbk.utf8(from: Self.newCustomerGBK) == Array("新客户来了".utf8))
        #expect(TextEncoding.gb18030.utf8(from: Self.newCustomerGBK) == Array("新客户来了".utf8))
        #expect(TextEncoding.gbk.utf8(from: Array("AUTH s3cret 1号".utf8.prefix(13)) + [0xBA, 0xC5]) == Array("AUTH s3cret 1号".utf8))
        // Four-byte GB18030, which GBK does not have: 𠀀 (U+20000).
        #expect(TextEncoding.gb18030.utf8(from: [0x95, 0x32, 0x82, 0x36]) == Array("𠀀".utf8))
        #expect(TextEncoding.gbk.utf8(from: [0x95, 0x32, 0x82, 0x36]) == nil)
        #expect(TextEncoding.gbk.utf8(from: []) == [])
    }

    @Test func invalidSequencesAreRefusedNotSkipped() {
        #expect(TextEncoding.gbk.utf8(from: [0x81, 0x20]) == nil, "a lead byte before a space")
        #expect(TextEncoding.gbk.utf8(from: Array(Self.newCustomerGBK.prefix(4)) + [0x81]) == nil, "a lead byte at the end")
        #expect(TextEncoding.gb18030.utf8(from: [0x95, 0x32, 0x82]) == nil, "four bytes cut short")
        #expect(TextEncoding.gbk.utf8(from: [0xFF, 0x41]) == nil)
    }

    @Test func utf8IsLeftAsItIsForTheUTF8Check() {
        #expect(TextEncoding.utf8.utf8(from: [0xFF, 0xFE]) == [0xFF, 0xFE])
        #expect(LineProtocol.parse([0xFF, 0xFE]) == .invalid(.badUTF8))
        #expect(LineProtocol.parse(Self.newCustomerGBK) == .invalid(.badUTF8), "GBK sent to a UTF-8 connection")
    }

    @Test func everyKindOfLineIsConverted() {
        #expect(LineProtocol.parse(Self.newCustomerGBK, encoding: .gbk) == .announce("新客户来了"))
        let json = Array(#"{"text": ""#.utf8) + Self.newCustomerGBK + Array(#"", "id": ""#.utf8) + [0xB6, 0xA9, 0xB5, 0xA5]
            + Array(#""}"#.utf8)
        var options = MessageOptions()
        options.clientID = "订单"
        #expect(LineProtocol.parse(json, encoding: .gbk) == .submission(Submission(text: "新客户来了", options: options)))
        #expect(LineProtocol.parse(Array("AUTH s3cret".utf8), encoding: .gb18030) == .auth("s3cret"))
        // JSON positions count characters, the same in GBK as in UTF-8: 新 and 客 are characters 10 and 11.
        let broken = Array(#"{"text": "#.utf8) + Self.newCustomerGBK + Array(#""}"#.utf8)
        #expect(LineProtocol.parse(broken, encoding: .gbk)
            == .invalid(.badJSON(#"not valid JSON at character 10 (near "\u65b0\u5ba2\u6237\u6765\u4e86\"}")"#)))
    }

    @Test func aLineNotValidInItsEncodingIsRefusedNamingIt() {
        #expect(LineProtocol.parse([0x41, 0x81, 0x20, 0x42], encoding: .gbk) == .invalid(.badEncoding(.gbk)))
        #expect(LineProtocol.parse(Self.newCustomerGBK + [0x81], encoding: .gb18030) == .invalid(.badEncoding(.gb18030)))
        #expect(LineProtocol.error(.badEncoding(.gbk)) == "ERR bad-encoding line is not valid GBK\n")
    }
}
