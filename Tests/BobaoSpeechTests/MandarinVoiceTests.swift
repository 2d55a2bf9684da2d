import BobaoCore
import BobaoSpeech
import BobaoTestSupport
import Foundation
import Synchronization
import Testing

/// `voices/zh` must read Han characters as Mandarin, never as English-spelled pinyin.
struct MandarinVoiceTests {
    static let phrases = [
        "新客户来了", "欢迎光临", "请稍等", "您的外卖到了", "谢谢惠顾", "请到三号窗口办理",
        "支付宝到账", "微信收款", "欢迎下次再来", "订单已完成", "请取餐", "会员卡余额不足",
        "请出示健康码", "祝您生活愉快", "本店今天休息", "电梯即将关门", "请排队等候", "您好请问几位",
        "打包带走", "请保管好您的随身物品", "前方到站人民广场", "小心地滑", "开始营业", "请扫码点餐",
    ]

    /// A Mandarin reading is a list of syllables, each with a tone contour (55, 35, 214, 51, 11, 33 …).
    static func looksMandarin(_ phonemes: String) -> Bool {
        !phonemes.contains("(") && phonemes.range(of: #"[1-5]{2}"#, options: .regularExpression) != nil
    }

    @Test(arguments: phrases)
    func projectVoiceReadsHanAsMandarin(phrase: String) throws {
        let phonemes = try EspeakSynthesizer.shared().phonemes(of: phrase, voice: "zh")
        #expect(Self.looksMandarin(phonemes), "voices/zh read \(phrase) as \(phonemes)")
        // One toned syllable for each Han character.
        let tones = phonemes.matches(of: /[1-5]{2,3}/).count
        #expect(tones == phrase.count, "\(phrase) → \(phonemes)")
    }

    /// The check above can fail: eSpeak's shipped voice switches to English for the same text.
    @Test func shippedVoiceSwitchesToEnglish() throws {
        let phonemes = try EspeakSynthesizer.shared().phonemes(of: "新客户来了", voice: "cmn")
        #expect(phonemes.contains("(en)"))
        #expect(!Self.looksMandarin(phonemes))
    }

    @Test func newCustomerIsXinKeHuLaiLe() throws {
        let phonemes = try EspeakSynthesizer.shared().phonemes(of: "新客户来了", voice: "zh")
        #expect(phonemes.hasPrefix("S;'i55n_| kh'o-51_| X'u51_| l'ai35_|"), "\(phonemes)")
    }

    /// The rendered length matches the reference CLI voice (cmn-latn-pinyin) within 10 %.
    @Test func renderLastsAsLongAsTheReferenceCLI() throws {
        let synthesizer = try EspeakSynthesizer.shared()
        let samples = Mutex<[Int16]>([])
        try synthesizer.synthesize("新客户来了", parameters: SpeechParameters(voice: "zh", rate: 175)) { event in
            if case .audio(let chunk) = event { samples.withLock { $0.append(contentsOf: chunk) } }
        }
        let ours = Double(samples.withLock { $0.count }) / Double(synthesizer.sampleRate)

        let reference = FileManager.default.temporaryDirectory.appendingPathComponent("bobao-ref-\(UUID()).wav")
        defer { try? FileManager.default.removeItem(at: reference) }
        try runProgram("espeak-ng", ["-v", "cmn-latn-pinyin", "-s", "175", "-w", reference.path, "新客户来了"])
        let theirs = try WAVFile(decoding: [UInt8](Data(contentsOf: reference))).duration
        #expect(theirs > 0.5)
        #expect(abs(ours - theirs) <= 0.1 * theirs, "ours \(ours) s, espeak-ng CLI \(theirs) s")
    }
}
