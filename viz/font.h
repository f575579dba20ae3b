/* A small bitmap font for text in pictures (viz/heatmap.c): printable ASCII (32..126) of the
 * X11 misc-fixed 7x13 font, public domain, cropped to 7x11 (viz/mkfont.py generates font.c). */
#ifndef RASPCC_VIZ_FONT_H
#define RASPCC_VIZ_FONT_H

enum { VIZ_FONT_WIDTH = 7, VIZ_FONT_HEIGHT = 11, VIZ_FONT_FIRST = 32, VIZ_FONT_CHARS = 95 };

/* Row r of character c: bit (VIZ_FONT_WIDTH - 1 - x) is pixel x; c outside 32..126 has no glyph. */
extern const unsigned char viz_font_glyphs[VIZ_FONT_CHARS][VIZ_FONT_HEIGHT];

#endif
