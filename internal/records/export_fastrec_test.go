package records

// SetGeneralOnly makes every record take the general path (see
// generalOnly); it returns the previous setting.
func SetGeneralOnly(on bool) bool {
	was := generalOnly
	generalOnly = on
	return was
}
