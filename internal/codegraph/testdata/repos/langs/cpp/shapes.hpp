#pragma once

namespace geo {

class Shape {
public:
	virtual ~Shape() = default;
	virtual double area() const = 0;
	double describe() const;
};

class Circle : public Shape {
public:
	explicit Circle(double r) : r_(r) {}
	double area() const override;

private:
	double r_;
};

double total_area(const Shape *shapes[], int n);

}  // namespace geo
