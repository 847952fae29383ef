package itlmetricsconnector

import (
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
)

func connectortestSettings() connector.Settings { return connectortest.NewNopSettings(Type) }
