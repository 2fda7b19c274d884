// Package npmregistry is a registry stand-in that serves one npm package, as a registry mirror on
// the runner would: the package document and its tarball, with the integrity npm checks. Tests
// and the network bench install from it through the sandbox's egress proxy.
package npmregistry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"
)

// Package is the one package served.
const Package = "studio-pad"

// Registry is a running stand-in.
type Registry struct {
	*httptest.Server
	tarballs atomic.Int32
}

// Tarballs counts the package's downloads.
func (r *Registry) Tarballs() int { return int(r.tarballs.Load()) }

// Start serves the package on 127.0.0.1; Close stops it.
func Start() *Registry {
	tgz := tarball(map[string]string{
		"package/package.json": `{"name":"` + Package + `","version":"1.0.0","main":"index.js"}`,
		"package/index.js":     "module.exports = (s, n) => s.padStart(n);\n",
	})
	sum1, sum512 := sha1.Sum(tgz), sha512.Sum512(tgz)
	r := &Registry{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/" + Package:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"name": Package, "dist-tags": map[string]string{"latest": "1.0.0"},
				"versions": map[string]any{"1.0.0": map[string]any{
					"name": Package, "version": "1.0.0",
					"dist": map[string]string{
						"tarball":   r.URL + "/" + Package + "/-/" + Package + "-1.0.0.tgz",
						"shasum":    hex.EncodeToString(sum1[:]),
						"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum512[:]),
					},
				}},
			})
		case "/" + Package + "/-/" + Package + "-1.0.0.tgz":
			r.tarballs.Add(1)
			_, _ = w.Write(tgz)
		default:
			http.NotFound(w, req)
		}
	}))
	return r
}

// tarball packs files as npm packs a package: a gzipped tar with fixed times.
func tarball(files map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range []string{"package/package.json", "package/index.js"} {
		content := files[name]
		_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), ModTime: time.Unix(1700000000, 0)})
		_, _ = tw.Write([]byte(content))
	}
	_ = tw.Close()
	_ = gz.Close()
	return buf.Bytes()
}
