#!/usr/bin/env bash
# Time to normalize 4 KiB announcement lines (the longest Bobao accepts), measured inside `bobao normalize`
# around the normalizer alone. Prints lines, bytes and microseconds a line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/release-build.sh

# Two inputs of 1,000 lines of 4 KiB each: "dense" is nothing but numeric phrases (about 250 numbers a
# line, the worst case); "typical" is shop text with a number every hundred bytes or so.
python3 - <<'PY'
import random
random.seed(7)
pieces = ["支付宝到账128.50元，", "请A012号到3号窗口，", "今天是2026-11-29，", "现在14:30，", "气温-3°C，",
          "优惠6.3%，", "电话010-12345678，", "尾号1234，", "2位客人，", "3-5个工作日，", "欢迎光临本店，",
          "比分78:96，", "第1001位客户，", "重量5kg，", "¥1,280.00，", "3/16，"]
words = ["欢迎光临本店，", "请您稍等片刻，", "本店新品上市，", "谢谢您的惠顾，", "请保管好随身物品，", "祝您生活愉快，"]
with open("/tmp/bobao-normalize-dense.txt", "w") as dense, open("/tmp/bobao-normalize-typical.txt", "w") as typical:
    for _ in range(1000):
        line = ""
        while len(line.encode()) < 4000:
            line += random.choice(pieces)
        print(line, file=dense)
        line = ""
        while len(line.encode()) < 4000:
            line += random.choice(pieces) if random.random() < 0.15 else random.choice(words)
        print(line, file=typical)
PY
for input in dense typical; do
    for run in 1 2 3; do
        printf '%-8s ' "$input" >&2
        "$bobao" normalize --stats </tmp/bobao-normalize-$input.txt >/dev/null
    done
done
