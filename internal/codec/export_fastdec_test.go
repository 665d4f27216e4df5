package codec

// SetGeneralOnly makes every decode take the general path for every
// field (see generalOnly); it returns the previous setting.
func SetGeneralOnly(on bool) bool {
	old := generalOnly
	generalOnly = on
	return old
}
