package ngsecrets

// SecretsBuffer exposes, to the external tests, the room the reader holds
// for a secrets block being collected: its capacity, the bytes collected
// and the length the block announced.
func SecretsBuffer(r *Reader) (capacity, collected int, announced int64) {
	return cap(r.secrets), len(r.secrets), int64(r.secLen)
}
