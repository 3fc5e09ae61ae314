module Geo
  PI = 3.14159

  class Shape
    def area
      0
    end

    def describe
      "area #{area}"
    end
  end

  class Circle < Shape
    def initialize(r)
      @r = r
    end

    def area
      PI * @r * @r
    end

    def self.unit
      new(1)
    end
  end

  def self.total_area(shapes)
    shapes.sum(&:area)
  end
end

puts Geo.total_area([Geo::Circle.unit])
circle = Geo::Circle.new(2)
puts circle.describe
