//go:build tools

// Package tools pins the helm client that `kschedctl lab build` compiles (the e2e and lint
// tests of `kschedctl render --as helm-chart` run the real `helm template`, `lint` and `install`).
package tools

import _ "helm.sh/helm/v4/cmd/helm"
