#import <Foundation/Foundation.h>

@interface Greeter : NSObject
- (void)greet;
@end

@implementation Greeter
- (void)greet {
    NSLog(@"Hello");
}
@end
