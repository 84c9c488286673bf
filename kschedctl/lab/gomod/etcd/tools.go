//go:build tools

// Package tools pins the etcd server that `kschedctl lab build` compiles.
package tools

import _ "go.etcd.io/etcd/server/v3"
