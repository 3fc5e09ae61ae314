from shapes import Circle, total_area


def run():
    print(total_area([Circle(1), Circle(2)]))
