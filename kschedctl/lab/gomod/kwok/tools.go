//go:build tools

// Package tools pins the kwok controller that `kschedctl lab build` compiles.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
