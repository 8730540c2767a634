"""Bridges to devices: the MCU serial link (and its emulator) and the camera device."""
