package itlprocessor

import (
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
)

func processortestSettings() processor.Settings { return processortest.NewNopSettings(Type) }
