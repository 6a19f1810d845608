// How Guildhall's metrics are registered: by their full name and help text,
// as docs/operating.md lists them. swift-prometheus asks for a name
// descriptor now (namespace, subsystem, unit); these build one from the full
// name, so each metric stays registered in one line. Touches nothing else.

import Prometheus

extension PrometheusCollectorRegistry {
    func counter(name: String, labels: [(String, String)] = [], help: String) -> Counter {
        makeCounter(descriptor: .fullName(name, help), labels: labels)
    }

    func gauge(name: String, labels: [(String, String)] = [], help: String) -> Gauge {
        makeGauge(descriptor: .fullName(name, help), labels: labels)
    }

    func valueHistogram(name: String, buckets: [Double], help: String) -> ValueHistogram {
        makeValueHistogram(descriptor: .fullName(name, help), buckets: buckets)
    }
}

extension MetricNameDescriptor {
    /// A metric named in full (its unit already part of the name).
    static func fullName(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }
}
