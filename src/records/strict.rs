//! Reading input with serde, refusing a struct given in serde's positional (JSON array) form.
//!
//! serde's derived `Deserialize` reads a struct from a sequence by position as well as from a
//! map, so `["a.rs",1,2]` would pass for `{"path":"a.rs","additions":1,"deletions":2}` at any
//! depth. Our inputs are objects. [`Strict`] wraps any deserializer and every deserializer it
//! hands on, and turns `deserialize_struct` given a sequence into an `invalid type` error, so
//! one wrapper at the entry point covers every nested struct, list item and option.
//!
//! serde reads internally tagged and untagged enums (and `#[serde(flatten)]` fields) from a
//! buffer of its own that this wrapper cannot reach: such types read from user input implement
//! `Deserialize` by hand and read their parts through [`from_value`] (see `vote::Record`).

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use std::fmt;

/// A deserializer whose structs must be objects, at every depth.
pub struct Strict<D>(pub D);

/// Parses one JSON text (the whole text) strictly.
pub fn from_str<'a, T: de::Deserialize<'a>>(text: &'a str) -> serde_json::Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(Strict(&mut de))?;
    de.end()?;
    Ok(value)
}

/// Reads a parsed JSON value strictly.
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> serde_json::Result<T> {
    T::deserialize(Strict(value))
}

/// Parses one JSON text (the whole text) as a value, refusing a key given twice at any depth:
/// for files read by hand (harness rows, recorded answers), where serde_json's own `Value`
/// would keep the last of the two silently.
pub fn value(text: &str) -> serde_json::Result<serde_json::Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = UniqueKeys.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Reads a JSON object as a map for a type that picks its variant by hand, refusing a key given
/// twice at any depth, as a derived struct does (a map would keep the last one silently).
pub fn object<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<serde_json::Map<String, serde_json::Value>, D::Error> {
    match d.deserialize_map(UniqueKeys)? {
        serde_json::Value::Object(map) => Ok(map),
        _ => Err(de::Error::invalid_type(
            Unexpected::Other("not a map"),
            &UniqueKeys,
        )),
    }
}

/// Builds a `serde_json::Value` and refuses duplicate keys in its objects.
struct UniqueKeys;

impl<'de> DeserializeSeed<'de> for UniqueKeys {
    type Value = serde_json::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<serde_json::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<serde_json::Value, E> {
        serde_json::Number::from_f64(v)
            .map(serde_json::Value::Number)
            .ok_or_else(|| E::invalid_value(Unexpected::Float(v), &"a finite number"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E: de::Error>(self) -> Result<serde_json::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<serde_json::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<serde_json::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<serde_json::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(UniqueKeys)? {
            items.push(item);
        }
        Ok(items.into())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<serde_json::Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(UniqueKeys)?;
            if out.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
            out.insert(key, value);
        }
        Ok(out.into())
    }
}

/// The visitor of whatever was asked for, with `object` set when it was a struct.
struct Wrap<V> {
    inner: V,
    object: bool,
}

fn wrap<V>(inner: V) -> Wrap<V> {
    Wrap {
        inner,
        object: false,
    }
}

macro_rules! forward_deserialize {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method($($arg,)* wrap(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<D> {
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any(); deserialize_bool(); deserialize_i8(); deserialize_i16();
        deserialize_i32(); deserialize_i64(); deserialize_i128(); deserialize_u8();
        deserialize_u16(); deserialize_u32(); deserialize_u64(); deserialize_u128();
        deserialize_f32(); deserialize_f64(); deserialize_char(); deserialize_str();
        deserialize_string(); deserialize_bytes(); deserialize_byte_buf();
        deserialize_option(); deserialize_unit(); deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str); deserialize_seq();
        deserialize_tuple(len: usize); deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map(); deserialize_identifier(); deserialize_ignored_any();
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = Wrap {
            inner: visitor,
            object: true,
        };
        self.0.deserialize_struct(name, fields, visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! forward_visit {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.object {
            f.write_str("an object")
        } else {
            self.inner.expecting(f)
        }
    }

    forward_visit! {
        visit_bool(bool); visit_i8(i8); visit_i16(i16); visit_i32(i32); visit_i64(i64);
        visit_i128(i128); visit_u8(u8); visit_u16(u16); visit_u32(u32); visit_u64(u64);
        visit_u128(u128); visit_f32(f32); visit_f64(f64); visit_char(char); visit_str(&str);
        visit_borrowed_str(&'de str); visit_string(String); visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]); visit_byte_buf(Vec<u8>);
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<V::Value, D2::Error> {
        self.inner.visit_some(Strict(d))
    }

    fn visit_newtype_struct<D2: Deserializer<'de>>(self, d: D2) -> Result<V::Value, D2::Error> {
        self.inner.visit_newtype_struct(Strict(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        if self.object {
            return Err(de::Error::invalid_type(Unexpected::Seq, &self));
        }
        self.inner.visit_seq(Strict(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(Strict(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(Strict(data))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Strict<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Strict(d))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Strict<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Strict(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Strict<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Strict(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Strict(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Strict<A> {
    type Error = A::Error;
    type Variant = Strict<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        let (value, variant) = self.0.variant_seed(Strict(seed))?;
        Ok((value, Strict(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Strict<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Strict(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, wrap(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let visitor = Wrap {
            inner: visitor,
            object: true,
        };
        self.0.struct_variant(fields, visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Item {
        path: String,
        n: u32,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        name: String,
        #[serde(default)]
        items: Vec<Item>,
        #[serde(default)]
        one: Option<Item>,
        #[serde(default)]
        by_name: std::collections::BTreeMap<String, Vec<Item>>,
    }

    #[test]
    fn objects_read_as_before() {
        let text = r#"{"name":"x","items":[{"path":"a","n":1}],"one":{"path":"b","n":2},"by_name":{"k":[{"path":"c","n":3}]}}"#;
        let strict: Outer = from_str(text).unwrap();
        assert_eq!(strict, serde_json::from_str::<Outer>(text).unwrap());
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(from_value::<Outer>(value).unwrap(), strict);
        // Text without escapes is still borrowed from the input.
        #[derive(Deserialize)]
        struct Borrowed<'a> {
            #[serde(borrow)]
            name: std::borrow::Cow<'a, str>,
        }
        let b: Borrowed = from_str(text).unwrap();
        assert!(matches!(b.name, std::borrow::Cow::Borrowed("x")));
    }

    #[test]
    fn a_struct_by_position_is_refused_at_every_depth() {
        for text in [
            r#"["x"]"#,
            r#"{"name":"x","items":[["a",1]]}"#,
            r#"{"name":"x","one":["a",1]}"#,
            r#"{"name":"x","by_name":{"k":[["a",1]]}}"#,
        ] {
            // serde alone reads each of them by position.
            assert!(serde_json::from_str::<Outer>(text).is_ok(), "{text}");
            let err = from_str::<Outer>(text).unwrap_err().to_string();
            assert!(
                err.starts_with("invalid type: sequence, expected an object at line 1"),
                "{text}: {err}"
            );
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            let err = from_value::<Outer>(value).unwrap_err().to_string();
            assert_eq!(err, "invalid type: sequence, expected an object", "{text}");
        }
    }

    #[test]
    fn an_object_read_by_hand_refuses_a_key_given_twice_at_any_depth() {
        let map = object(&mut serde_json::Deserializer::from_str(
            r#"{"a":{"b":[1,-2,0.5,null,true,"s"]}}"#,
        ))
        .unwrap();
        assert_eq!(
            map["a"]["b"],
            serde_json::json!([1, -2, 0.5, null, true, "s"])
        );
        for text in [r#"{"a":1,"a":1}"#, r#"{"a":[{"b":1,"b":2}]}"#] {
            let err = object(&mut serde_json::Deserializer::from_str(text)).unwrap_err();
            assert!(
                err.to_string().starts_with("duplicate field"),
                "{text}: {err}"
            );
        }
        assert!(object(&mut serde_json::Deserializer::from_str("[1]")).is_err());
    }

    #[test]
    fn a_value_read_by_hand_refuses_a_key_given_twice_at_any_depth() {
        let text = r#"[{"a":{"b":[1,-2,0.5,null,true,"s"]}}, 18446744073709551615, 1e400]"#;
        let value = value(text);
        assert!(
            value.is_err(),
            "an infinite number is refused as serde_json does"
        );
        let text = r#"[{"a":{"b":[1,-2,0.5,null,true,"s"]}}, 18446744073709551615, "x"]"#;
        assert_eq!(
            super::value(text).unwrap(),
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
        for text in [r#"{"a":1,"a":1}"#, r#"[{"a":[{"b":1,"b":2}]}]"#] {
            let err = super::value(text).unwrap_err().to_string();
            assert!(err.starts_with("duplicate field"), "{text}: {err}");
        }
        assert!(super::value("{} {}").is_err(), "one text, not two");
    }

    #[test]
    fn lists_that_are_lists_stay_lists() {
        let v: Vec<(String, u32)> = from_str(r#"[["a",1]]"#).unwrap();
        assert_eq!(v, [("a".to_string(), 1)]);
    }
}
