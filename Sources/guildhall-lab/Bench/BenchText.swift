// Chat-like text for the benchmarks that store or search words: messages
// of 5 to 20 words drawn from English and Chinese vocabularies, common
// words far more often than rare ones (as in real chat), half the messages
// mixing both languages. Deterministic for a seed, so runs compare.

import GuildhallCore

enum BenchText {
    static let english = """
        the be to of and a in that have it for not on with he as you do at this but his by from they we say her she or an will my one all \
        would there their what so up out if about who get which go me when make can like time no just him know take people into year your \
        good some could them see other than then now look only come its over think also back after use two how our work first well way even \
        new want because any these give day most us meeting release build server channel message launch deploy review update design test \
        coffee lunch weekend holiday project deadline budget report customer support ticket invoice contract travel flight hotel airport \
        station harbour river mountain garden kitchen window library museum concert ticket football basketball tennis guitar piano camera \
        photo video music movie story chapter question answer problem solution idea plan schedule calendar morning evening tonight tomorrow \
        yesterday monday tuesday wednesday thursday friday saturday sunday january february march april summer winter spring autumn rain \
        snow sunny cloudy storm bridge tunnel highway bicycle train subway taxi parking office school college student teacher doctor nurse \
        hospital pharmacy market bakery restaurant noodles dumplings rice bread cheese apple banana orange mango chocolate birthday wedding \
        party dinner breakfast password account login logout database backup restore network latency throughput memory storage cluster
        """.split(separator: " ").map(String.init)
    static let chinese = """
        我们 你们 他们 今天 明天 昨天 上午 下午 晚上 会议 项目 发布 服务 频道 消息 问题 答案 方案 计划 时间 地点 北京 上海 广州 深圳 杭州 \
        成都 南京 武汉 西安 天津 重庆 朋友 同事 老师 学生 医生 公司 学校 医院 银行 超市 餐厅 咖啡 午饭 晚饭 早饭 周末 假期 旅行 机场 火车 \
        地铁 出租 酒店 电影 音乐 照片 视频 游戏 足球 篮球 网球 跑步 游泳 天气 下雨 下雪 晴天 阴天 春天 夏天 秋天 冬天 生日 婚礼 聚会 礼物 \
        手机 电脑 网络 密码 账号 登录 数据 备份 恢复 延迟 内存 存储 集群 测试 设计 开发 上线 部署 版本 更新 文档 报告 预算 合同 客户 支持 \
        工单 发票 北京烤鸭 火锅 饺子 面条 米饭 包子 苹果 香蕉 橙子 芒果 巧克力 蛋糕 好吃 好玩 开心 谢谢 你好 再见 没问题 辛苦了 加油
        """.split(separator: " ").map(String.init)

    /// A message of 5 to 20 words for `seed`.
    static func message(seed: UInt64) -> String {
        var random = SeededRandom(seed: seed)
        let count = 5 + Int(random.next() % 16)
        let mixed = random.next() % 2 == 0
        var out: [String] = []
        out.reserveCapacity(count)
        for _ in 0..<count {
            let fromChinese = mixed && random.next() % 3 == 0
            out.append(word(fromChinese ? chinese : english, &random))
        }
        return out.joined(separator: " ")
    }

    /// A word of `list`, the first ones far more often (the square of a uniform draw).
    static func word(_ list: [String], _ random: inout SeededRandom) -> String {
        let u = Double(random.next() % 1_000_000) / 1_000_000
        return list[min(list.count - 1, Int(u * u * Double(list.count)))]
    }
}
