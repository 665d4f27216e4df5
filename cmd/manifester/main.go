// Command manifester shows what every Kafka API puts on the wire: it encodes
// the smallest legal instance of each request and response, decodes real
// bytes into the same annotated view, and serves it all as a site.
//
// Run "manifester --help" for the commands.
package main

import (
	"os"

	"github.com/manifester/manifester/internal/cli"
)

func main() { os.Exit(cli.Run(os.Args[1:])) }
