package openaiitl_test

import (
	"fmt"

	"go.opentelemetry.io/otel/attribute"
)

func attrKey(k string) attribute.Key { return attribute.Key(k) }

func sprintf(f string, a ...any) string { return fmt.Sprintf(f, a...) }
