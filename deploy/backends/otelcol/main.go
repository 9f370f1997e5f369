// Command otelcol-probability is an OpenTelemetry Collector with exactly the
// components that deploy/otel-collector/config.yaml uses, built from the
// collector's released Go modules (all at one release, pinned in go.mod):
//
//	receivers:  otlp
//	processors: memory_limiter
//	exporters:  otlp_grpc (Jaeger), otlp_http (Prometheus), debug (logs)
//
// deploy/build-backends.sh builds it; tests/deploy runs it with
// deploy/otel-collector/config.yaml (addresses rewritten to loopback ports).
package main

import (
	"log"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

// version is set by deploy/build-backends.sh (-ldflags -X main.version=...).
var version = "dev"

func components() (otelcol.Factories, error) {
	var err error
	factories := otelcol.Factories{}
	if factories.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](
		otlpreceiver.NewFactory(),
	); err != nil {
		return otelcol.Factories{}, err
	}
	if factories.Processors, err = otelcol.MakeFactoryMap[processor.Factory](
		memorylimiterprocessor.NewFactory(),
	); err != nil {
		return otelcol.Factories{}, err
	}
	if factories.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](
		otlpexporter.NewFactory(),
		otlphttpexporter.NewFactory(),
		debugexporter.NewFactory(),
	); err != nil {
		return otelcol.Factories{}, err
	}
	// The service's own telemetry (service.telemetry: logs, the :8888 metrics).
	factories.Telemetry = otelconftelemetry.NewFactory()
	return factories, nil
}

func main() {
	info := component.BuildInfo{
		Command:     "otelcol-probability",
		Description: "OpenTelemetry Collector for pytest-probability's deploy/ stack",
		Version:     version,
	}
	settings := otelcol.CollectorSettings{
		BuildInfo: info,
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{
					envprovider.NewFactory(),
					fileprovider.NewFactory(),
					yamlprovider.NewFactory(),
				},
			},
		},
	}
	if err := otelcol.NewCommand(settings).Execute(); err != nil {
		log.Fatal(err)
	}
}
