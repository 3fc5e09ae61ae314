package codegraph

// The queries name what they capture:
//   @def.<kind> a definition node, with @name its name (and @recv, Go's receiver type);
//   @call a called name, @member a name read through a qualifier, @qual that qualifier;
//   @ref any other identifier; @package Go's package; @import.alias/@import.path a Go import, or
//   a name a Python or JavaScript file imports and the module it comes from;
//   @local.name (or @local.field, a member of the enclosing class) a variable whose type is
//   @local.type (declared or constructed) or @local.guess (the result of calling that name,
//   of package @local.pkg).
// A node captured twice (as @ref and as @call) keeps the union of what it was.

const goQuery = `
(package_clause (package_identifier) @package)
(import_spec name: (_)? @import.alias path: (_) @import.path)
(function_declaration name: (identifier) @name) @def.func
(method_declaration receiver: (parameter_list (parameter_declaration type: (_) @recv)) name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name) @def.type
(type_alias name: (type_identifier) @name) @def.type
(method_elem name: (field_identifier) @name) @def.method
(const_spec name: (identifier) @name) @def.const
(source_file (var_declaration (var_spec name: (identifier) @name) @def.var))
(parameter_declaration name: (identifier) @local.name type: (_) @local.type)
(var_spec name: (identifier) @local.name type: (_) @local.type)
(short_var_declaration left: (expression_list (identifier) @local.name))
(range_clause left: (expression_list (identifier) @local.name))
(variadic_parameter_declaration name: (identifier) @local.name)
(field_declaration name: (field_identifier) @local.field type: (_) @local.type)
(short_var_declaration left: (expression_list . (identifier) @local.name) right: (expression_list . (composite_literal type: (_) @local.type)))
(short_var_declaration left: (expression_list . (identifier) @local.name) right: (expression_list . (unary_expression operand: (composite_literal type: (_) @local.type))))
(short_var_declaration left: (expression_list . (identifier) @local.name) right: (expression_list . (call_expression function: (identifier) @local.guess)))
(short_var_declaration left: (expression_list . (identifier) @local.name) right: (expression_list . (call_expression function: (selector_expression operand: (identifier) @local.pkg field: (field_identifier) @local.guess))))
(call_expression function: (identifier) @call)
(call_expression function: (selector_expression operand: (_) @qual field: (field_identifier) @call))
(selector_expression operand: (_) @qual field: (field_identifier) @member)
(qualified_type package: (package_identifier) @qual name: (type_identifier) @member)
(identifier) @ref
(type_identifier) @ref
`

const pythonQuery = `
(function_definition name: (identifier) @name) @def.func
(class_definition name: (identifier) @name) @def.class
(module (expression_statement (assignment left: (identifier) @name) @def.const))
(import_from_statement module_name: (_) @import.path name: (dotted_name . (identifier) @import.alias))
(typed_parameter (identifier) @local.name type: (type) @local.type)
(parameters (identifier) @local.name)
(default_parameter name: (identifier) @local.name)
(assignment left: (identifier) @local.name)
(for_statement left: (identifier) @local.name)
(assignment left: (identifier) @local.name right: (call function: (identifier) @local.guess))
(assignment left: (attribute object: (identifier) attribute: (identifier) @local.field) right: (call function: (identifier) @local.guess))
(call function: (identifier) @call)
(call function: (attribute object: (_) @qual attribute: (identifier) @call))
(attribute object: (_) @qual attribute: (identifier) @member)
(identifier) @ref
`

const jsCommon = `
(import_statement (import_clause (named_imports (import_specifier name: (identifier) @import.alias))) source: (string) @import.path)
(import_statement (import_clause (identifier) @import.alias) source: (string) @import.path)
(function_declaration name: (identifier) @name) @def.func
(generator_function_declaration name: (identifier) @name) @def.func
(class_declaration name: (_) @name) @def.class
(method_definition name: (_) @name) @def.method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @def.func
(program (lexical_declaration (variable_declarator name: (identifier) @name) @def.const))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name) @def.const)))
(variable_declarator name: (identifier) @local.name value: (new_expression constructor: (identifier) @local.type))
(variable_declarator name: (identifier) @local.name)
(variable_declarator name: (identifier) @local.name value: (call_expression function: (identifier) @local.guess))
(assignment_expression left: (member_expression object: (this) property: (property_identifier) @local.field) right: (new_expression constructor: (identifier) @local.type))
(call_expression function: (identifier) @call)
(call_expression function: (member_expression object: (_) @qual property: (property_identifier) @call))
(new_expression constructor: (identifier) @call)
(member_expression object: (_) @qual property: (property_identifier) @member)
(identifier) @ref
`

const jsQuery = jsCommon + `
(field_definition property: (property_identifier) @local.field value: (new_expression constructor: (identifier) @local.type))
(formal_parameters (identifier) @local.name)
`

const tsQuery = jsCommon + `
(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(type_alias_declaration name: (_) @name) @def.type
(enum_declaration name: (_) @name) @def.enum
(method_signature name: (_) @name) @def.method
(abstract_method_signature name: (_) @name) @def.method
(function_signature name: (identifier) @name) @def.func
(required_parameter pattern: (identifier) @local.name type: (type_annotation (_) @local.type))
(required_parameter pattern: (identifier) @local.name)
(optional_parameter pattern: (identifier) @local.name type: (type_annotation (_) @local.type))
(variable_declarator name: (identifier) @local.name type: (type_annotation (_) @local.type))
(public_field_definition name: (property_identifier) @local.field type: (type_annotation (_) @local.type))
(public_field_definition name: (property_identifier) @local.field value: (new_expression constructor: (identifier) @local.type))
(type_identifier) @ref
`

const rustQuery = `
(function_item name: (identifier) @name) @def.func
(function_signature_item name: (identifier) @name) @def.func
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(union_item name: (type_identifier) @name) @def.struct
(trait_item name: (type_identifier) @name) @def.trait
(impl_item type: (_) @name) @def.impl
(type_item name: (type_identifier) @name) @def.type
(const_item name: (identifier) @name) @def.const
(static_item name: (identifier) @name) @def.const
(mod_item name: (identifier) @name body: (_)) @def.module
(macro_definition name: (identifier) @name) @def.macro
(parameter pattern: (identifier) @local.name type: (_) @local.type)
(let_declaration pattern: (identifier) @local.name type: (_) @local.type)
(let_declaration pattern: (identifier) @local.name)
(let_declaration pattern: (identifier) @local.name value: (call_expression function: (scoped_identifier path: (identifier) @local.guess)))
(let_declaration pattern: (identifier) @local.name value: (call_expression function: (identifier) @local.guess))
(call_expression function: (identifier) @call)
(call_expression function: (scoped_identifier path: (_) @qual name: (identifier) @call))
(call_expression function: (field_expression value: (_) @qual field: (field_identifier) @call))
(macro_invocation macro: (identifier) @call)
(field_expression value: (_) @qual field: (field_identifier) @member)
(scoped_identifier path: (_) @qual name: (identifier) @member)
(scoped_type_identifier path: (_) @qual name: (type_identifier) @member)
(identifier) @ref
(type_identifier) @ref
`

const javaQuery = `
(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(record_declaration name: (identifier) @name) @def.class
(annotation_type_declaration name: (identifier) @name) @def.interface
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.constructor
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @def.field
(formal_parameter type: (_) @local.type name: (identifier) @local.name)
(local_variable_declaration type: (_) @local.type declarator: (variable_declarator name: (identifier) @local.name))
(local_variable_declaration declarator: (variable_declarator name: (identifier) @local.name value: (object_creation_expression type: (_) @local.type)))
(field_declaration type: (_) @local.type declarator: (variable_declarator name: (identifier) @local.field))
(method_invocation object: (_) @qual name: (identifier) @call)
(method_invocation name: (identifier) @call)
(object_creation_expression type: (type_identifier) @call)
(field_access object: (_) @qual field: (identifier) @member)
(identifier) @ref
(type_identifier) @ref
`
