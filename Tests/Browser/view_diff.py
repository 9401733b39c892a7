"""The composite scene view by view: where the face, heart and dragon boxes
fall in an image of any size, and how much of each box differs between two
images (the page's drawing and the server's frame)."""

import json

from PIL import Image, ImageChops

from support import REPO

# The composite's layout, as both the page and the server read it.
SCENE = json.loads((REPO / "web" / "assets" / "scene-art.json").read_text())["scene"]
VIEWS = ("face", "heart", "dragon")

# A pixel differs strongly when every pixel within REACH of it in the other
# image differs from it by more than STRONG (of 255) in some channel, seen
# from both images. Anti-aliasing and sub-pixel placement between Chromium
# and Cairo stay within that; a stroke drawn on one side only, or a shape
# moved by more than a pixel, does not.
STRONG = 64
REACH = 1

# Largest share of a view's pixels that may differ strongly. Measured over
# the tests' states at 507×165, 1015×330 and 2030×660, true state against
# the defects planted in CanvasMatchesServerFrame:
#   face    true 0.000 %;  no mouth ≥ 0.62 %, scale × 1.1 ≥ 10.9 %
#   heart   true ≤ 0.016 %;  fill level 0.1 lower ≥ 6.1 %
#   dragon  true ≤ 0.28 % (the status text: its glyphs differ between
#           Chromium and Cairo);  10 px off ≥ 2.95 %
# Each bound is at least three times the true value and at most a third
# of the smallest planted defect.
BOUNDS = {"face": 0.001, "heart": 0.001, "dragon": 0.009}


def boxes(width, height):
    """Each view's box in whole pixels (left, top, right, bottom) of a
    width×height image the composite is fitted into, keeping its aspect and
    centred (as FrameRenderer and the page's drawFitted do)."""
    scale = min(width / SCENE["width"], height / SCENE["height"])
    left = (width - SCENE["width"] * scale) / 2
    top = (height - SCENE["height"] * scale) / 2
    result = {}
    for view in VIEWS:
        box = SCENE[view]
        result[view] = (round(left + box["x"] * scale), round(top + box["y"] * scale),
                        round(left + (box["x"] + box["width"]) * scale),
                        round(top + (box["y"] + box["height"]) * scale))
    return result


def on_white(image):
    """RGB over a white background, so transparent pixels compare as the page shows them."""
    image = image.convert("RGBA")
    background = Image.new("RGBA", image.size, (255, 255, 255, 255))
    return Image.alpha_composite(background, image).convert("RGB")


def largest_channel(image):
    red, green, blue = image.split()
    return ImageChops.lighter(ImageChops.lighter(red, green), blue)


def nearest_difference(a, b):
    """For each pixel of `a`: its difference (largest channel) to the closest pixel of `b` within REACH."""
    nearest = None
    for dx in range(-REACH, REACH + 1):
        for dy in range(-REACH, REACH + 1):
            difference = largest_channel(ImageChops.difference(a, ImageChops.offset(b, dx, dy)))
            nearest = difference if nearest is None else ImageChops.darker(nearest, difference)
    return nearest


def differences(page, frame):
    """{view: share (0...1) of the view's pixels that differ strongly} for two images of one size."""
    if page.size != frame.size:
        raise ValueError(f"sizes differ: {page.size} and {frame.size}")
    page, frame = on_white(page), on_white(frame)
    strong = ImageChops.lighter(nearest_difference(page, frame), nearest_difference(frame, page))
    shares = {}
    for view, box in boxes(*page.size).items():
        histogram = strong.crop(box).histogram()
        shares[view] = sum(histogram[STRONG + 1:]) / sum(histogram)
    return shares


def over_bounds(measured):
    """The views whose difference exceeds their bound."""
    return [view for view in VIEWS if measured[view] > BOUNDS[view]]


def describe(measured):
    return "  ".join(f"{view} {measured[view] * 100:.3f}%" for view in VIEWS)
