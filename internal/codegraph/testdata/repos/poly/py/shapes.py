import math

UNIT = 1.0


class Shape:
    def area(self):
        raise NotImplementedError

    def describe(self):
        return f"{type(self).__name__} of area {self.area()}"


class Circle(Shape):
    def __init__(self, r):
        self.r = r

    def area(self):
        return math.pi * self.r * self.r


def total_area(shapes):
    return sum(s.area() for s in shapes)
