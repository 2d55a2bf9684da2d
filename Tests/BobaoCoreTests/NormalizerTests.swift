import BobaoCore
import Testing

/// What a listener at the counter should hear for each written form. Each row is (written, heard).
struct NormalizerTests {
    let normalizer = TextNormalizer.standard

    static let cardinals: [(String, String)] = [
        ("1001", "一千零一"), ("1010", "一千零一十"), ("20500", "两万零五百"), ("100000", "十万"), ("15", "十五"),
        ("10", "十"), ("110", "一百一十"), ("1000001", "一百万零一"), ("100010", "十万零一十"), ("0", "零"),
        ("200000000", "两亿"), ("1,280", "一千二百八十"), ("12,345,678", "一千二百三十四万五千六百七十八"),
        ("-2", "负二"), ("温度-15度", "温度负十五度"), ("第1001位客户", "第一千零一位客户"), ("2000人", "两千人"),
        ("3050", "三千零五十"), ("90009", "九万零九"), ("12", "十二"), ("一共35件", "一共三十五件"),
    ]

    static let decimals: [(String, String)] = [
        ("0.5", "零点五"), ("6.42", "六点四二"), ("3.14159", "三点一四一五九"), ("体温36.8度", "体温三十六点八度"),
        ("10.05", "十点零五"), ("1.5万元", "一点五万元"), ("2.5", "二点五"),
    ]

    static let money: [(String, String)] = [
        ("支付宝到账128.50元", "支付宝到账一百二十八点五元"), ("收款128.50元", "收款一百二十八点五元"),
        ("¥1,280.00", "一千二百八十元"), ("￥35", "三十五元"), ("微信收款12.00元", "微信收款十二元"),
        ("$5", "五美元"), ("US$20", "二十美元"), ("HK$100", "一百港元"), ("HKD 100", "一百港元"),
        ("100 HKD", "一百港元"), ("€9.90", "九点九欧元"), ("2元", "两元"), ("¥2", "两元"), ("5块钱", "五块钱"),
        ("2块5", "两块五"), ("售价99元起", "售价九十九元起"), ("退款-30元", "退款负三十元"), ("RMB 500", "五百元"),
        ("花了1,000,000元", "花了一百万元"),
    ]

    static let percentages: [(String, String)] = [
        ("6.3%", "百分之六点三"), ("50％", "百分之五十"), ("涨了100%", "涨了百分之一百"), ("下降了-2%", "下降了负百分之二"),
        ("3%-5%", "百分之三到百分之五"), ("0.5%", "百分之零点五"), ("12.50%", "百分之十二点五"),
    ]

    static let fractions: [(String, String)] = [
        ("3/16", "十六分之三"), ("1/2", "二分之一"), ("打折后只要2/3的价格", "打折后只要三分之二的价格"),
        ("9/10", "十分之九"),
    ]

    static let dates: [(String, String)] = [
        ("2026-11-29", "二零二六年十一月二十九日"), ("2026/11/29", "二零二六年十一月二十九日"),
        ("2026.11.29", "二零二六年十一月二十九日"), ("2026年11月29日", "二零二六年十一月二十九日"),
        ("1999年", "一九九九年"), ("2月3日", "二月三日"), ("11/29号", "十一月二十九号"), ("2008-08-08", "二零零八年八月八日"),
        ("有效期至2027-01-31", "有效期至二零二七年一月三十一日"), ("2020-2026年", "二零二零到二零二六年"),
    ]

    static let times: [(String, String)] = [
        ("14:30", "十四点三十分"), ("2:02", "两点零二分"), ("11:00", "十一点"), ("13:10:36", "十三点十分三十六秒"),
        ("下午３：１５", "下午三点十五分"), ("0:30", "零点三十分"), ("8:05", "八点零五分"), ("12:00", "十二点"),
        ("8:00-17:00营业", "八点到十七点营业"), ("10:30～11:30", "十点三十分到十一点三十分"), ("22:45", "二十二点四十五分"),
    ]

    static let digitStrings: [(String, String)] = [
        ("13812345678", "幺三八幺二三四五六七八"), ("138-1234-5678", "幺三八 幺二三四 五六七八"),
        ("电话010-12345678", "电话零幺零 幺二三四五六七八"), ("尾号1234的顾客", "尾号幺二三四的顾客"),
        ("手机：5678", "手机：五六七八"), ("请A012号到3号窗口", "请A零一二号到三号窗口"), ("编号007", "编号零零七"),
        ("编号为123", "编号为一二三"), ("订单20261129001", "订单二零二六一一二九零零一"), ("400-820-8820", "四零零 八二零 八八二零"),
        ("取餐码 8866", "取餐码 八八六六"), ("B3号桌", "B三号桌"), ("K1234次列车", "K一二三四次列车"),
        ("1234567890123456789", "一二三四五六七八九零一二三四五六七八九"),
        ("人民路88号3栋2单元501室", "人民路八十八号三栋二单元五零一室"), ("订单号1129", "订单号一一二九"),
    ]

    static let twoOrLiang: [(String, String)] = [
        ("2位", "两位"), ("2个", "两个"), ("2年", "两年"), ("2天", "两天"), ("2杯咖啡", "两杯咖啡"), ("2小时", "两小时"),
        ("第2名", "第二名"), ("2号", "二号"), ("2楼", "二楼"), ("2月", "二月"), ("第2个", "第二个"), ("12个", "十二个"),
        ("22位", "二十二位"), ("2", "二"), ("2万人", "两万人"), ("200个", "两百个"), ("请2号顾客取餐", "请二号顾客取餐"),
    ]

    static let units: [(String, String)] = [
        ("5kg", "五公斤"), ("2km", "两公里"), ("36.5°C", "三十六点五摄氏度"), ("零下5℃", "零下五摄氏度"),
        ("80m²", "八十平方米"), ("60km/h", "六十公里每小时"), ("500ml", "五百毫升"), ("1.5L", "一点五升"),
        ("10 cm", "十厘米"), ("300g", "三百克"), ("限速120km/h", "限速一百二十公里每小时"), ("2°C", "二摄氏度"),
        ("100m跑道", "一百米跑道"),
    ]

    static let rangesAndScores: [(String, String)] = [
        ("3-5个", "三到五个"), ("预计2-3天到货", "预计两到三天到货"), ("10-20元", "十到二十元"), ("1.5-2.5公斤", "一点五到二点五公斤"),
        ("3~5人", "三到五人"), ("比分78:96", "比分七十八比九十六"), ("比分3:2", "比分三比二"), ("78:96", "七十八比九十六"),
        ("主队以2:1战胜客队", "主队以二比一战胜客队"), ("3-2-501室", "三杠二杠五零一室"),
    ]

    /// Text a listener expects to hear exactly as written: nothing numeric, or nothing to change.
    static let untouched = [
        "欢迎光临", "新客户来了", "请稍等", "谢谢惠顾，欢迎下次再来！", "Hello, welcome!", "请出示健康码。", "",
        "今天天气很好", "iPhone到货了", "三号窗口", "一百二十八元", "ＡＢＣ",
    ]

    static let all: [(String, String)] = cardinals + decimals + money + percentages + fractions + dates + times
        + digitStrings + twoOrLiang + units + rangesAndScores

    @Test func theTableIsLargeAndCoversEveryCategory() {
        #expect(Self.all.count >= 100)
        let categories = Set(Self.all.flatMap { normalizer.explain($0.0).map(\.category) })
        #expect(categories.isSuperset(of: ["cardinal", "money", "percent", "fraction", "date", "time", "digits", "unit", "range"]))
    }

    @Test(arguments: all)
    func isSaidTheWayAListenerExpects(written: String, heard: String) {
        #expect(normalizer.normalize(written) == heard, "\(normalizer.explain(written))")
    }

    @Test(arguments: untouched)
    func textWithoutNumbersPassesUnchanged(text: String) {
        #expect(normalizer.normalize(text) == text)
        #expect(normalizer.explain(text).isEmpty)
    }

    @Test func aWholeAnnouncementKeepsItsWordsAndPunctuation() {
        #expect(normalizer.normalize("今天是2026年11月29日，现在14:30，气温-3°C，请A012号到2号窗口。")
            == "今天是二零二六年十一月二十九日，现在十四点三十分，气温负三摄氏度，请A零一二号到二号窗口。")
    }

    @Test func decisionsExplainWhichRuleWon() {
        let decisions = normalizer.explain("¥128.50，2026-11-29，3-5个")
        #expect(decisions.map(\.category) == ["money", "date", "range"])
        #expect(decisions[0] == TextNormalizer.Decision(original: "¥128.50", spoken: "一百二十八点五元", category: "money"))
    }

    /// Inputs the fuzzer found: whatever the shape, no digit is left for eSpeak to read in English.
    @Test(arguments: ["2m3:00-17:8:001-17:7:8:8-0003:", "1.2.3.4.5.6", "9" + String(repeating: "9", count: 40), "1:2:3:4",
                      "--5--", "１２.３４％", "1,2,,3", "2m2m2"])
    func noDigitIsLeftUnread(text: String) {
        let spoken = normalizer.normalize(text)
        #expect(!spoken.unicodeScalars.contains { ("0"..."9").contains($0) || (0xFF10...0xFF19).contains($0.value) }, "\(spoken)")
    }

    @Test func aLongLineIsHandledWhole() {
        let line = String(repeating: "收款128.50元，", count: 300)
        let spoken = normalizer.normalize(line)
        #expect(spoken == String(repeating: "收款一百二十八点五元，", count: 300))
    }
}

struct ChineseNumeralsTests {
    @Test(arguments: [
        (UInt64(1), "一"), (11, "十一"), (19, "十九"), (20, "二十"), (101, "一百零一"), (2000, "两千"),
        (10_000, "一万"), (10_001, "一万零一"), (110_000, "十一万"), (1_000_000, "一百万"), (100_000_000, "一亿"),
        (100_000_001, "一亿零一"), (120_003_000, "一亿二千万三千"), (120_000_300, "一亿二千万零三百"), (1_000_000_000_000, "一万亿"),
    ])
    func counts(value: UInt64, spoken: String) {
        #expect(ChineseNumerals.cardinal(value) == spoken)
    }

    @Test func digitByDigitSaysYaoOnlyForPhones() {
        #expect(ChineseNumerals.digitByDigit("1010") == "一零一零")
        #expect(ChineseNumerals.digitByDigit("1010", phoneStyle: true) == "幺零幺零")
    }
}
