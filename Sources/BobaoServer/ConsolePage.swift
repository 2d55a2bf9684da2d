/// The web console at `GET /` (placeholder until the console lands).
enum ConsolePage {
    static let html = #"""
<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>Bobao</title></head><body><h1>Bobao 播报</h1></body></html>
"""#
}
