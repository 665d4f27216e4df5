package server

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/site"
)

// A site built with a base path (site.Options.BasePath) is served under
// it: the prefix is cut off before the site and the dynamic handlers see
// the request, redirects add it back (site.Site.URL), and the HTML pages
// dynamic handlers answer get their links as the site's own pages carry
// them (site.Site.Relinked).

// stripBase returns a shallow copy of r whose URL path is the site path p.
func stripBase(r *http.Request, p string) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	r2.URL = new(url.URL)
	*r2.URL = *r.URL
	r2.URL.Path = p
	r2.URL.RawPath = ""
	return r2
}

// withMethod returns a shallow copy of r with another method.
func withMethod(r *http.Request, method string) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	r2.Method = method
	return r2
}

// linkWriter holds back a dynamic handler's HTML answer and writes it with
// its links rewritten, and puts redirects to site paths under the base
// path; every other answer passes through. A 404 is the site's 404 page,
// whose links are under the base path already. For a HEAD request (head),
// the handler answers as for GET, so that the headers, Content-Length
// included, are GET's; a held body is dropped, and net/http drops the
// others (it still knows the request is HEAD).
//
// A held answer that declares its Content-Length is written as soon as
// that many bytes are held, from within the handler's Write (so that a
// handler that counts its answer until written, as the decode form does,
// counts the rewritten copy too); others when the handler returns.
type linkWriter struct {
	http.ResponseWriter
	site    *site.Site
	from    string
	status  int
	hold    bool
	head    bool
	flushed bool
	length  int // the declared Content-Length of a held answer, or -1
	buf     bytes.Buffer
}

func (lw *linkWriter) WriteHeader(status int) {
	if lw.status != 0 {
		return
	}
	lw.status = status
	h := lw.Header()
	if loc := h.Get("Location"); status >= 300 && status < 400 && strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") {
		h.Set("Location", lw.site.URL(loc))
	}
	ct := h.Get("Content-Type")
	if status != http.StatusNotFound && strings.HasPrefix(ct, "text/html") && h.Get("Content-Encoding") == "" {
		lw.hold = true
		lw.length = -1
		if n, err := strconv.Atoi(h.Get("Content-Length")); err == nil && n >= 0 {
			lw.length = n
		}
		return
	}
	lw.ResponseWriter.WriteHeader(status)
}

func (lw *linkWriter) Write(b []byte) (int, error) {
	if lw.status == 0 {
		lw.WriteHeader(http.StatusOK)
	}
	if lw.hold {
		if lw.flushed {
			return 0, http.ErrContentLength
		}
		n, err := lw.buf.Write(b)
		if lw.length >= 0 && lw.buf.Len() >= lw.length {
			lw.flush()
		}
		return n, err
	}
	return lw.ResponseWriter.Write(b)
}

// flush writes a held answer, once.
func (lw *linkWriter) flush() {
	if !lw.hold || lw.flushed {
		return
	}
	lw.flushed = true
	body := lw.site.Relinked(lw.buf.Bytes(), lw.from)
	lw.Header().Set("Content-Length", strconv.Itoa(len(body)))
	lw.ResponseWriter.WriteHeader(lw.status)
	if !lw.head {
		lw.ResponseWriter.Write(body)
	}
}
